package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
local users
function init(args) users = common.load_tokens(); math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)) end
function request()
  local u = users[math.random(#users)]
  return wrk.format("GET", "/v1/friends/nearby?radius=500", { ["Authorization"] = "Bearer " .. u.token })
end
done = common.done
