-- Any GET route, for tools/bench/routes: COASTERLIFE_PATH is the request target, in which {lat},
-- {lon}, {park}, {ride} and {friend} stand for the signed-in user's (only users who have every one
-- the target names are sampled; COASTERLIFE_NEEDS names more, as "park" for a route that asks
-- for a user on a visit). COASTERLIFE_TOKEN, when set, signs every request in as that one user (a
-- route whose data only they have, like the photo the survey uploads). Besides the summary line it
-- prints the mean bytes a response took on the wire, head included.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local path = os.getenv("COASTERLIFE_PATH") or error("COASTERLIFE_PATH is not set")
  local only = os.getenv("COASTERLIFE_TOKEN")
  if only == "" then only = nil end
  local users = common.load_tokens(function(u)
    for name in path:gmatch("{(%w+)}") do
      if u[name] == nil then return false end
    end
    for name in (os.getenv("COASTERLIFE_NEEDS") or ""):gmatch("%w+") do
      if u[name] == nil then return false end
    end
    return only == nil or u.token == only
  end)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    local target = path:gsub("{(%w+)}", function(name)
      if u[name] == nil then error("unknown placeholder {" .. name .. "} in " .. path) end
      return u[name]
    end)
    return wrk.format("GET", target, { ["Authorization"] = "Bearer " .. u.token })
  end)
end
function done(summary, latency, requests)
  common.done(summary, latency, requests)
  io.write(string.format("BYTES %.0f\n", summary.requests > 0 and summary.bytes / summary.requests or 0))
end
