--[[
  Cron schedules: a hash per schedule (K.schedule .. name: spec JSON,
  expression and timezone as fact text (for its facts: scripts never read
  the JSON), paused '0'/'1', createdAt, updatedAt, revision, anchoredAt,
  runCount, and nextRunAt, lastRunAt when set; schedule-codec.ts), its name in K.schedules (score 0),
  and, while it has a next tick, its name in K.scheduleDue scored by it.
]]

--[[
  Sets (or, with nil, clears) a schedule's next tick, in its hash and the
  due index. A tick that becomes the earliest of all is announced (k =
  'n', a = its time): replicas plan their next schedule pass by the
  earliest tick (ScheduleStore.findDueSchedules).
]]
local function setNextRun(name, nextRunAt)
  if nextRunAt then
    redis.call('HSET', K.schedule .. name, 'nextRunAt', nextRunAt)
    redis.call('ZADD', K.scheduleDue, nextRunAt, name)
    if redis.call('ZRANGE', K.scheduleDue, 0, 0)[1] == name then
      redis.call('PUBLISH', K.channel, cjson.encode({ k = 'n', a = int(nextRunAt) }))
    end
  else
    redis.call('HDEL', K.schedule .. name, 'nextRunAt')
    redis.call('ZREM', K.scheduleDue, name)
  end
end

-- A schedule's hash as a flat list (empty when there is none).
local function scheduleHash(name)
  return redis.call('HGETALL', K.schedule .. name)
end

--[[
  Records a schedule fact (fact-codec.ts, kind 's') for `tick`; `details`
  holds, as the fact has them: job, type, queue, runCount, reason,
  missedCount, lastMissed, atLeast ('0'/'1').
]]
local function scheduleFact(name, now, tick, details)
  local f = redis.call('HMGET', K.schedule .. name, 'expression', 'timezone')
  local d = details
  record(factLine('s', { now, name, f[1], f[2], tick, d.job, d.type, d.queue, d.runCount, d.reason, d.missedCount, d.lastMissed, d.atLeast }, 13))
end
