-- wrk script: POST the OFREP evaluation body in OFREP_BODY_FILE (or a ~1 KB context).
-- `wrk -s Benchmarks/ofrep-post.lua http://HOST:PORT/ofrep/v1/evaluate/flags`
-- No `response` callback: with one, wrk hands every answer's headers and body to Lua, which
-- costs wrk more than the server's answer costs and caps the rate it can measure. wrk counts
-- non-2xx/3xx answers itself (`summary.errors.status`, printed below).
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

function done(summary, latency, requests)
  io.write(string.format("OFREPRESULT bytes=%d non2xx_or_errors=%d\n", #body,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
