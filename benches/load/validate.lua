-- wrk script: POST the invoice in $INVEX_LOAD_DOC to /v1/invoice/validate with $INVEX_LOAD_KEY.
wrk.method = "POST"
wrk.path = "/v1/invoice/validate?profile=peppol-bis3-sk"
wrk.headers["Content-Type"] = "application/xml"
wrk.headers["X-API-Key"] = os.getenv("INVEX_LOAD_KEY")
local f = assert(io.open(os.getenv("INVEX_LOAD_DOC"), "rb"))
wrk.body = f:read("*a")
f:close()

-- With INVEX_LOAD_DELAY_MS set, each connection pauses about that long (±50 %, so the
-- connections do not march in step) between its requests: many connections at a chosen
-- rate instead of as fast as the server answers. Latency is measured without the pause.
local pause = tonumber(os.getenv("INVEX_LOAD_DELAY_MS") or "")
if pause then
  delay = function()
    return math.random(math.floor(pause * 0.5), math.floor(pause * 1.5))
  end
end

local failures = 0
response = function(status, headers, body)
  if status ~= 200 then failures = failures + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format(
    "RESULT requests=%d duration_s=%.1f rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f errors=%d non200=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
