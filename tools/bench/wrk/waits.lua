-- POST /v1/rides/{ride}/waits: a crowd wait report by a user standing at the ride (on a visit, with
-- a fresh fix). The server runs with --report-window 0, so repeated reports are accepted.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
local users
function init(args)
  users = common.load_tokens(function(u) return u.ride ~= nil end)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end
function request()
  local u = users[math.random(#users)]
  return wrk.format("POST", "/v1/rides/" .. u.ride .. "/waits",
    { ["Authorization"] = "Bearer " .. u.token, ["Content-Type"] = "application/json" },
    string.format('{"minutes":%d}', math.random(0, 90)))
end
done = common.done
