-- GET /v1/friends/nearby as the world's askers (the tokens file holds them and only them: every
-- level asks the same ones), one request for each, walked in turn from a random start per thread,
-- so that every asker is asked as often as the others.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens(); math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  local n = math.random(#users)
  request = common.cycle(function()
    n = n % #users + 1
    return wrk.format("GET", "/v1/friends/nearby?radius=500", { ["Authorization"] = "Bearer " .. users[n].token })
  end, #users)
end
done = common.done
