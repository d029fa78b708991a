-- wrk script for the durable-write benchmark:
--   wrk -t2 -c64 -d10s -s Benchmarks/put.lua http://127.0.0.1:PORT/preferences/name
-- Every request is PUT {"value":"w<thread>-<n>"} on the URL's path, a value no
-- other request uses, so every write is a real change (an equal value would
-- change nothing and cost nothing). Only 2xx answers count as acknowledged;
-- everything else is reported, with the statuses seen.
-- The value is a string, so the key must be a string preference (`name`).

local threads = {}

function setup(thread)
   thread:set("id", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   -- globals, so done() can read them with thread:get()
   acked = 0
   rejected = 0
   statuses = {}
   counter = 0
   headers = { ["Content-Type"] = "application/json" }
end

function request()
   counter = counter + 1
   local body = string.format('{"value":"w%d-%d"}', id, counter)
   return wrk.format("PUT", wrk.path, headers, body)
end

function response(status, hdrs, body)
   if status >= 200 and status < 300 then
      acked = acked + 1
   else
      rejected = rejected + 1
      statuses[tostring(status)] = (statuses[tostring(status)] or 0) + 1
   end
end

function done(summary, latency, requests)
   local ok, bad, seen = 0, 0, {}
   for _, t in ipairs(threads) do
      ok = ok + t:get("acked")
      bad = bad + t:get("rejected")
      for s, n in pairs(t:get("statuses")) do seen[s] = (seen[s] or 0) + n end
   end
   local list = {}
   for s, n in pairs(seen) do table.insert(list, s .. "x" .. n) end
   local secs = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "PUTRESULT acked=%d non2xx=%d acked_per_s=%.1f duration_s=%.2f p50_ms=%.2f p99_ms=%.2f " ..
      "socket_errors=%d statuses=%s\n",
      ok, bad, ok / secs, secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
      e.connect + e.read + e.write + e.timeout, #list > 0 and table.concat(list, ",") or "none"))
end
