-- POST /v1/rides/{ride}/rides: each request a ride log by another rider (tools/bench/challenges),
-- riders taken in the tokens file's order from COASTERLIFE_OFFSET on, the threads interleaved
-- (thread t of COASTERLIFE_THREADS takes every COASTERLIFE_THREADS-th rider from the offset + t),
-- wrapping round at the end of the file. A rider can log the ride once: the ride's cycle refuses
-- a second log for 150 s, so only 201s are counted as the rate, and every other status is
-- listed. Besides the summary line it prints how far the riders were taken (USED), for the next
-- run's offset.
package.path = package.path .. ";" .. os.getenv("COASTERLIFE_WRK") .. "/?.lua"
local common = require("common")
local threads = {}
function setup(thread)
  thread:set("index", #threads)
  threads[#threads + 1] = thread
end
local users, stride, offset
sent, created, statuses = 0, 0, {}
function init(args)
  users = common.load_tokens(function(u) return u.ride ~= nil end)
  stride = tonumber(os.getenv("COASTERLIFE_THREADS") or "1")
  offset = tonumber(os.getenv("COASTERLIFE_OFFSET") or "0") + index
end
function request()
  local u = users[(offset + sent * stride) % #users + 1]
  sent = sent + 1
  return wrk.format("POST", "/v1/rides/" .. u.ride .. "/rides", { ["Authorization"] = "Bearer " .. u.token })
end
function response(status, headers, body)
  if status == 201 then
    created = created + 1
  else
    statuses[status] = (statuses[status] or 0) + 1
  end
end
function done(summary, latency, requests)
  local made, most, other, listed = 0, 0, 0, {}
  local by = {}
  for _, thread in ipairs(threads) do
    made = made + thread:get("created")
    most = math.max(most, thread:get("sent"))
    for status, n in pairs(thread:get("statuses")) do by[status] = (by[status] or 0) + n end
  end
  for status, n in pairs(by) do
    other = other + n
    listed[#listed + 1] = status .. ":" .. n
  end
  table.sort(listed)
  local seconds = summary.duration / 1e6
  -- The summary line of the other scripts, with 201s a second as the rate and every other status
  -- as non-2xx.
  io.write(string.format("RESULT requests/s %.0f p50_ms %.2f p99_ms %.2f errors %d non2xx %d\n",
    made / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, other))
  io.write(string.format("STATUSES %s\n", #listed > 0 and table.concat(listed, ",") or "-"))
  io.write(string.format("USED %d\n", most * #threads))
end
