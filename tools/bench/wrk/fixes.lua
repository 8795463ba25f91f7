-- POST /v1/fixes with COASTERLIFE_BATCH fixes (default 1): each near the user's position, each
-- with a fresh time (a counter in the fraction of a second) so none is a duplicate.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
local users
local batch = tonumber(os.getenv("COASTERLIFE_BATCH") or "1")
local counter = 0
function init(args) users = common.load_tokens(); math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)) end
function request()
  local u = users[math.random(#users)]
  local fixes = {}
  local stamp = os.date("!%Y-%m-%dT%H:%M:%S", os.time() - 2)
  for i = 1, batch do
    counter = counter + 1
    fixes[i] = string.format('{"lat":%.7f,"lon":%.7f,"accuracy":8,"recordedAt":"%s.%06dZ"}',
      u.lat + (math.random() - 0.5) * 2e-5, u.lon + (math.random() - 0.5) * 2e-5, stamp, counter % 1000000)
  end
  return wrk.format("POST", "/v1/fixes", { ["Authorization"] = "Bearer " .. u.token, ["Content-Type"] = "application/json" },
    "[" .. table.concat(fixes, ",") .. "]")
end
done = common.done
