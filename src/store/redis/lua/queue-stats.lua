--[[
  queue-stats (read only): one queue's counts, pause and oldest available
  job (as list-queues gives them), and its throughput in the minutes up to
  the one holding `now` (domain throughput.ts throughputMinutes).
  ARGV: 1 now, 2 queue.
  Returns: {{queue, {state, count...}, paused (0/1), enqueue time of its oldest
           available job ('' for none)}, {{completed, failed, discarded}...}}
           with one entry per minute, oldest first (nil counts where nothing happened).
  Bounded: one counts hash, one listing entry and THROUGHPUT_MINUTES small hashes.
]]
argCount(2)
local now = argNow(1)
local queue = argId(2)
local minutes = {}
local current = now - now % MINUTE_MS
for m = THROUGHPUT_MINUTES - 1, 0, -1 do
  local key = K.stats .. queue .. ':' .. int(current - m * MINUTE_MS)
  minutes[#minutes + 1] = redis.call('HMGET', key, 'completed', 'failed', 'discarded')
end
return { queueSummary(queue), minutes }
