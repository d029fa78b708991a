-- wrk script: etcd v3 PUT over its JSON gateway, one new value per request, like put.lua.
--   wrk -t2 -c64 -d10s -s Benchmarks/etcd-put.lua http://127.0.0.1:PORT/v3/kv/put
local threads = {}
function setup(thread) thread:set("id", #threads + 1); table.insert(threads, thread) end
function init(args) acked = 0; rejected = 0; counter = 0; headers = { ["Content-Type"] = "application/json" } end
local b = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(data)
   return ((data:gsub(".", function(x)
      local r, byte = "", x:byte()
      for i = 8, 1, -1 do r = r .. (byte % 2 ^ i - byte % 2 ^ (i - 1) > 0 and "1" or "0") end
      return r
   end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
      if #x < 6 then return "" end
      local c = 0
      for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
      return b:sub(c + 1, c + 1)
   end) .. ({ "", "==", "=" })[#data % 3 + 1])
end
local key = base64("name")
function request()
   counter = counter + 1
   local body = string.format('{"key":"%s","value":"%s"}', key, base64(string.format("w%d-%d", id, counter)))
   return wrk.format("POST", wrk.path, headers, body)
end
function response(status, hdrs, body) if status >= 200 and status < 300 then acked = acked + 1 else rejected = rejected + 1 end end
function done(summary, latency, requests)
   local ok, bad = 0, 0
   for _, t in ipairs(threads) do ok = ok + t:get("acked"); bad = bad + t:get("rejected") end
   local secs = summary.duration / 1e6
   io.write(string.format("PUTRESULT acked=%d non2xx=%d acked_per_s=%.1f p50_ms=%.2f p99_ms=%.2f\n",
      ok, bad, ok / secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
