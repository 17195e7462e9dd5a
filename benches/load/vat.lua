-- wrk script: GET /v1/vat/verify with $INVEX_LOAD_KEY; $INVEX_LOAD_SET picks the numbers:
--   cached    20 valid SK numbers, asked before the run (answers come from the cache)
--   rejected  numbers that fail the local checks (answered without a register)
--   uncached  a new valid SK number every request (each one goes to the register)
--   slow      the number the VIES stub holds for 5 s
-- INVEX_LOAD_DELAY_MS paces each connection as in validate.lua.
wrk.headers["X-API-Key"] = os.getenv("INVEX_LOAD_KEY")
local set = os.getenv("INVEX_LOAD_SET") or "cached"

CACHED = {
  "SK2022749619", "SK2020317068", "SK1389615843", "SK9979544025", "SK2599435267",
  "SK7241379376", "SK5739655724", "SK9590936520", "SK7296376791", "SK4221828754",
  "SK4432410950", "SK7475582290", "SK5883955220", "SK5581108918", "SK7471166901",
  "SK4426084916", "SK9873618689", "SK9922673519", "SK5348522157", "SK6436260435",
}
local rejected = {
  "SK2020123456", "SK0022749619", "DE12345678", "FR00000000000", "XX123",
  "ATU13585626", "CZ12", "SK202274961", "GB123456789", "EL09425921",
}

-- A random valid Slovak VAT number: 10 digits, no leading 0, third digit in
-- {2,3,4,7,8,9}, divisible by 11.
local function fresh_sk()
  while true do
    local n = math.random(100000000, 999999999) * 11
    local s = string.format("%d", n)
    local third = string.sub(s, 3, 3)
    if #s == 10 and string.find("234789", third, 1, true) then return "SK" .. s end
  end
end

local i = 0
request = function()
  i = i + 1
  local vat
  if set == "rejected" then vat = rejected[(i % #rejected) + 1]
  elseif set == "uncached" then vat = fresh_sk()
  elseif set == "slow" then vat = "SK1020304758"
  else vat = CACHED[(i % #CACHED) + 1] end
  return wrk.format("GET", "/v1/vat/verify?vat=" .. vat)
end

local pause = tonumber(os.getenv("INVEX_LOAD_DELAY_MS") or "")
if pause then
  delay = function()
    return math.random(math.floor(pause * 0.5), math.floor(pause * 1.5))
  end
end

done = function(summary, latency, requests)
  io.write(string.format(
    "RESULT set=%s requests=%d duration_s=%.1f rps=%.0f p50_ms=%.2f p95_ms=%.2f p99_ms=%.2f max_ms=%.2f errors=%d non2xx=%d\n",
    set, summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
