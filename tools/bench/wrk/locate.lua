package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens(); math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    return wrk.format("GET", string.format("/v1/locate?lat=%.6f&lon=%.6f&accuracy=10", u.lat + (math.random() - 0.5) * 1e-4, u.lon + (math.random() - 0.5) * 1e-4),
      { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
