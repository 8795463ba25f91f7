-- Shared by the wrk scripts: session tokens (from `coasterbench load`) and a one-line summary.
local M = {}

-- One user per line of the tokens file: `token lat lon park ride friend` (`-` for no park, no
-- ride in reporting reach, no friend they have a conversation with). `keep(user)` may filter them
-- (the wait scripts want users at a ride).
function M.load_tokens(keep)
  local path = os.getenv("COASTERLIFE_TOKENS")
  local users = {}
  for line in io.lines(path) do
    local token, lat, lon, park, ride, friend = line:match("^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$")
    if token then
      local u = { token = token, lat = tonumber(lat), lon = tonumber(lon),
                  park = park ~= "-" and park or nil, ride = ride ~= "-" and ride or nil,
                  friend = friend ~= "-" and friend or nil }
      if keep == nil or keep(u) then users[#users + 1] = u end
    end
  end
  if #users == 0 then error("no suitable users in " .. path) end
  return users
end

-- A request function cycling through `count` requests made by `make()` at start (default 4,096):
-- the GET scripts' requests need no fresh values, and formatting each in Lua as it is sent took
-- CPU from the server on the two cores the client shares with it.
function M.cycle(make, count)
  local requests, n = {}, 0
  for i = 1, count or 4096 do requests[i] = make() end
  return function() n = n % #requests + 1; return requests[n] end
end

function M.done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT requests/s %.0f p50_ms %.2f p99_ms %.2f errors %d non2xx %d\n",
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end

return M
