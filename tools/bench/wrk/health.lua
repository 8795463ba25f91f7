package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
request = common.cycle(function() return wrk.format("GET", "/health") end, 1)
done = common.done
