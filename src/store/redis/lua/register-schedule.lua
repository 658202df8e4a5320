--[[
  register-schedule: stores a schedule, or updates the one of its name
  (upsert), keeping its creation time and runs and bumping its revision.
  ARGV: 1 now, 2 name, 3 spec JSON (schedule-codec.ts), 4 paused (0/1),
        5 next tick ('' for none; ignored while paused), 6 expression and
        7 timezone, as fact text (for its facts), 8 most schedules (a new
        one beyond is refused), 9 anchor (anchoredAt: the application
        decides whether a registration keeps it).
  Returns: {created (0/1), schedule hash} | {'full'} (changed nothing).
]]
argCount(9)
local now = argNow(1)
local name = argId(2)
local spec = argId(3)
local paused = argFlag(4)
local nextRunAt = argOptionalTime(5)
local expression = argId(6)
local timezone = argId(7)
local maxSchedules = argInt(8, 0, MAX_COUNT)
local anchoredAt = argTime(9)
local key = K.schedule .. name
local created = redis.call('EXISTS', key) == 0
if created and redis.call('ZCARD', K.schedules) >= maxSchedules then return { 'full' } end
if created then redis.call('HSET', key, 'createdAt', now, 'runCount', 0) end
redis.call('HSET', key, 'spec', spec, 'expression', expression, 'timezone', timezone, 'paused', paused and '1' or '0', 'updatedAt', now, 'anchoredAt', anchoredAt)
redis.call('HINCRBY', key, 'revision', 1)
redis.call('ZADD', K.schedules, 0, name)
setNextRun(name, not paused and nextRunAt or nil)
return { created and 1 or 0, scheduleHash(name) }
