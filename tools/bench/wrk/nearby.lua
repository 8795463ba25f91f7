package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens(); math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    return wrk.format("GET", "/v1/friends/nearby?radius=500", { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
