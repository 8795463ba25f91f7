package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
-- The nearest restroom: each request by a user on a visit to a park, about that park, so that the
-- answer is measured from their own latest fix (distances, nearest first), as a visitor asks it.
function init(args)
  local users = common.load_tokens(function(u) return u.park ~= nil end)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    return wrk.format("GET", "/v1/parks/" .. u.park .. "/places?category=restroom&limit=1", { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
