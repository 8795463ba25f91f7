-- GET /v1/messages: the caller's conversations, each with its last message and unread count.
-- COASTERLIFE_MESSAGES=conversation: GET /v1/messages/{friend}, the newest page of one of them;
-- COASTERLIFE_MESSAGES=send: POST /v1/messages/{friend}, a message to that friend.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
function init(args)
  local users = common.load_tokens(function(u) return u.friend ~= nil end)
  local mode = os.getenv("COASTERLIFE_MESSAGES") or "list"
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  request = common.cycle(function()
    local u = users[math.random(#users)]
    local auth = { ["Authorization"] = "Bearer " .. u.token }
    if mode == "conversation" then return wrk.format("GET", "/v1/messages/" .. u.friend, auth) end
    if mode == "send" then
      auth["Content-Type"] = "application/json"
      return wrk.format("POST", "/v1/messages/" .. u.friend, auth, '{"body":"Meet at the exit of the coaster?"}')
    end
    return wrk.format("GET", "/v1/messages", auth)
  end)
end
done = common.done
