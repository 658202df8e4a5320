--[[
  queue-counts (read only): the job counts per state of every known queue.
  ARGV: none.
  Returns: {{queue, {state, count...}}...}.
]]
local result = {}
for _, queue in ipairs(redis.call('SMEMBERS', K.queues)) do
  result[#result + 1] = { queue, redis.call('HGETALL', K.counts .. queue) }
end
return result
