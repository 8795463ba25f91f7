-- GET /v1/parks/{park}/waits: the wait board of the park a user stands in.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens(function(u) return u.park ~= nil end)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    return wrk.format("GET", "/v1/parks/" .. u.park .. "/waits", { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
