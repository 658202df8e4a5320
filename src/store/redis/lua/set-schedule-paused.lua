--[[
  set-schedule-paused: pauses a schedule (no next tick) or resumes it at
  the tick given.
  ARGV: 1 now, 2 name, 3 paused (0/1), 4 next tick when resuming ('' for none).
  Returns: {'not_found'} | {'ok', changed (0/1), schedule hash}.
]]
argCount(4)
local now = argNow(1)
local name = argId(2)
local paused = argFlag(3)
local nextRunAt = argOptionalTime(4)
local key = K.schedule .. name
local was = redis.call('HGET', key, 'paused')
if not was then return { 'not_found' } end
if (was == '1') == paused then return { 'ok', 0, scheduleHash(name) } end
redis.call('HSET', key, 'paused', paused and '1' or '0', 'updatedAt', now)
setNextRun(name, not paused and nextRunAt or nil)
return { 'ok', 1, scheduleHash(name) }
