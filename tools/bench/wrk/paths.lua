-- GET requests taking turns over the request targets of the file COASTERLIFE_PATHS (one a line),
-- each signed in as a random user of the tokens file: a mix of queries measured as one route, as
-- tools/bench/posts asks its post searches.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local file = os.getenv("COASTERLIFE_PATHS") or error("COASTERLIFE_PATHS is not set")
  local paths = {}
  for line in io.lines(file) do
    if line ~= "" then paths[#paths + 1] = line end
  end
  if #paths == 0 then error("no request targets in " .. file) end
  local users = common.load_tokens()
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  local n = 0
  request = common.cycle(function()
    n = n + 1
    local u = users[math.random(#users)]
    return wrk.format("GET", paths[(n - 1) % #paths + 1], { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
