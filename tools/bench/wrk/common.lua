-- Shared by the wrk scripts: session tokens (from `coasterbench load`) and a one-line summary.
local M = {}

function M.load_tokens()
  local path = os.getenv("COASTERLIFE_TOKENS")
  local users = {}
  for line in io.lines(path) do
    local token, lat, lon = line:match("^(%S+) (%S+) (%S+)$")
    if token then users[#users + 1] = { token = token, lat = tonumber(lat), lon = tonumber(lon) } end
  end
  return users
end

function M.done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT requests/s %.0f p50_ms %.2f p99_ms %.2f errors %d non2xx %d\n",
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end

return M
