--[[
  find-due-schedules (read only): the schedules whose next tick is at or
  before now, earliest first.
  ARGV: 1 now, 2 limit.
  Returns: {schedule hash...}.
]]
argCount(2)
local now = argNow(1)
local limit = argInt(2, 1, MAX_PAGE_SIZE)
local found = {}
for _, name in ipairs(redis.call('ZRANGEBYSCORE', K.scheduleDue, '-inf', now, 'LIMIT', 0, limit)) do
  found[#found + 1] = scheduleHash(name)
end
return found
