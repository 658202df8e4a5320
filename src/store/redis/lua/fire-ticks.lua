--[[
  fire-ticks: applies a tick plan (domain planTicks) to a schedule that is
  still as it was read: at `revision`, with `expected` as its next tick.
  Post: the tick's job, if any, is stored as enqueue stores it
        (lib/new-jobs.lua; its unique policy is the overlap policy, so an
        unfinished job of the schedule may stand in for it, or be
        cancelled); the schedule's next tick moves on; a job stored sets
        lastRunAt to the tick and counts a run. Facts: the missed ticks
        skipped (reason missed), then the tick triggered, or skipped for
        the unfinished job that stood in (reason overlap_skip), or the tick
        whose template no longer makes a job (reason invalid_template).
  ARGV: 1 now, 2 name, 3 revision, 4 expected next tick, 5 next tick ('' for
        none), 6 the tick that fires ('' for none), 7 the first missed tick,
        8 how many, 9 the last counted, 10 whether more passed (0/1) (all ''
        without missed ticks), 11 the tick whose template makes no job
        (''), 12 job count (1 with a tick, else 0), then the job's head and
        hash (lib/new-jobs.lua).
  Returns: {'stale'} (changed nothing) | {'ok', schedule hash, {outcome}}
         | {'duplicate', id} | {'unique', 0, holder id, holder state, key}.
  Atomic: every argument is checked, and the schedule compared, before the
  first write.
]]
local now = argNow(1)
local name = argId(2)
local revision = argInt(3, 1, MAX_COUNT)
local expected = argTime(4)
local nextRunAt = argOptionalTime(5)
local tick = argOptionalTime(6)
local missedFirst = argOptionalTime(7)
local missedCount = argOptionalInt(8, 1, MAX_COUNT)
local missedLast = argOptionalTime(9)
local missedAtLeast = argOptional(10)
if (missedFirst ~= nil) ~= (missedCount ~= nil) or (missedFirst ~= nil) ~= (missedLast ~= nil) or (missedFirst ~= nil) ~= (missedAtLeast ~= nil) then
  refuse(7, 'missed ticks need their first, count, last and whether more passed')
end
if missedAtLeast and missedAtLeast ~= '0' and missedAtLeast ~= '1' then refuse(10, 'is not 0 or 1') end
local invalidTick = argOptionalTime(11)
if (argCountOf(12) == 1) ~= (tick ~= nil) then refuse(12, 'must be 1 with a tick and 0 without') end
if invalidTick and tick then refuse(11, 'a tick either fires a job or has an invalid template') end
local jobs, taken = argNewJobs(12)
local key = K.schedule .. name
local seen = redis.call('HMGET', key, 'revision', 'nextRunAt', 'paused')
if seen[1] ~= text(revision) or seen[2] ~= text(expected) or seen[3] ~= '0' then return { 'stale' } end
if not jobs then return { 'duplicate', taken } end
local refusal = decideUnique(jobs, now)
if refusal then return refusal end
local outcomes = storeNewJobs(jobs, now)
setNextRun(name, nextRunAt)
if missedFirst then
  scheduleFact(name, now, missedFirst, { reason = 'missed', missedCount = missedCount, lastMissed = missedLast, atLeast = missedAtLeast })
end
if invalidTick then scheduleFact(name, now, invalidTick, { reason = 'invalid_template' }) end
local job = jobs[1]
if job and job.existing then
  local held = redis.call('HMGET', K.job .. job.existing, 'type', 'queue')
  scheduleFact(name, now, tick, { job = job.existing, type = held[1], queue = held[2], reason = 'overlap_skip' })
elseif job then
  redis.call('HSET', key, 'lastRunAt', tick)
  local runs = redis.call('HINCRBY', key, 'runCount', 1)
  -- The tick's job is new: its hash holds what the template made of it.
  scheduleFact(name, now, tick, { job = job.id, type = redis.call('HGET', K.job .. job.id, 'type'), queue = job.queue, runCount = runs })
end
finish()
return { 'ok', scheduleHash(name), outcomes }
