--[[
  remove-schedule: removes a schedule, its name and its next tick.
  ARGV: 1 name.
  Returns: 1 when there was one, else 0.
]]
argCount(1)
local name = argId(1)
if redis.call('DEL', K.schedule .. name) == 0 then return 0 end
redis.call('ZREM', K.schedules, name)
redis.call('ZREM', K.scheduleDue, name)
return 1
