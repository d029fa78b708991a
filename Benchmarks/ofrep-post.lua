-- wrk script: POST the OFREP evaluation body in OFREP_BODY_FILE (or a ~1 KB context) and count
-- 2xx answers. `wrk -s Benchmarks/ofrep-post.lua http://HOST:PORT/ofrep/v1/evaluate/flags`
local file = os.getenv("OFREP_BODY_FILE")
local body
if file then
  local f = assert(io.open(file, "r")); body = f:read("*a"); f:close()
else
  local attributes = {}
  for i = 1, 24 do attributes[#attributes + 1] = string.format('"attribute%02d":"value-%02d-abcdefghijklmnop"', i, i) end
  body = '{"context":{"targetingKey":"user-1234","plan":"pro",' .. table.concat(attributes, ",") .. '}}'
end
wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local ok, bad = 0, 0
function response(status, headers, body)
  if status >= 200 and status < 300 then ok = ok + 1 else bad = bad + 1 end
end

function done(summary, latency, requests)
  io.write(string.format("OFREPRESULT bytes=%d non2xx_or_errors=%d\n", #body,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
