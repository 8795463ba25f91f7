-- GET /v1/parks/{park}/waits: the wait board of the park a user stands in.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
local users
function init(args)
  users = common.load_tokens(function(u) return u.park ~= nil end)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end
function request()
  local u = users[math.random(#users)]
  return wrk.format("GET", "/v1/parks/" .. u.park .. "/waits", { ["Authorization"] = "Bearer " .. u.token })
end
done = common.done
