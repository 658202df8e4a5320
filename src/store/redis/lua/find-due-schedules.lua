--[[
  find-due-schedules (read only): the schedules whose next tick is at or
  before now, earliest first, and when the next pass is due.
  ARGV: 1 now, 2 limit.
  Returns: {{schedule hash...}, now if the limit left due schedules out, else
           the earliest next tick after now ('' for none)}.
]]
argCount(2)
local now = argNow(1)
local limit = argInt(2, 1, MAX_PAGE_SIZE)
local found = {}
local names = redis.call('ZRANGEBYSCORE', K.scheduleDue, '-inf', now, 'LIMIT', 0, limit + 1)
for i = 1, math.min(#names, limit) do
  found[i] = scheduleHash(names[i])
end
local nextDue
if #names > limit then
  nextDue = int(now)
else
  nextDue = redis.call('ZRANGEBYSCORE', K.scheduleDue, '(' .. int(now), '+inf', 'LIMIT', 0, 1, 'WITHSCORES')[2]
end
return { found, nextDue or '' }
