package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function request() return wrk.format("GET", "/health") end
done = common.done
