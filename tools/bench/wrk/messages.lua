-- GET /v1/messages: the caller's conversations, each with its last message and unread count
-- (COASTERLIFE_MESSAGES=conversation: GET /v1/messages/{friend}, the newest page of one of them).
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens(function(u) return u.friend ~= nil end)
  local conversation = os.getenv("COASTERLIFE_MESSAGES") == "conversation"
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    local path = conversation and ("/v1/messages/" .. u.friend) or "/v1/messages"
    return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. u.token })
  end)
end
done = common.done
