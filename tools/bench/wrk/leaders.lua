-- GET /v1/leaderboards/rides: the all-time rides board's first page and the caller's own rank
-- (COASTERLIFE_SCOPE=friends: the board of the caller and their friends).
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens()
  local scope = os.getenv("COASTERLIFE_SCOPE") or "global"
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    return wrk.format("GET", "/v1/leaderboards/rides?scope=" .. scope, { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
