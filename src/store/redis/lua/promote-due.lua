--[[
  promote-due: scheduled | retryable -> available when their time comes.
  Pre:  the job's scheduled_at or next_retry_at is <= now.
  Post: promoted jobs are in their ready queue, each with its fact; due
        entries of jobs that no longer wait for a time are dropped on the way.
  ARGV: 1 now, 2 limit (due entries examined at most).
  Returns: {{transition...}, when the earliest due entry left falls due ('' for none)}:
        an entry of a job that has left its waiting state counts until a pass
        drops it, so the time may be early, never late.
  Bounded: the index scan takes at most `limit` entries. Atomic: one script;
  every argument is checked before the first write.
]]
argCount(2)
local now = argNow(1)
local limit = argCountOf(2)
local transitions = {}

for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.due, '-inf', now, 'LIMIT', 0, limit)) do
  zrem(K.due, id)
  local job = redis.call('HMGET', K.job .. id, 'state', 'scheduledAt', 'nextRetryAt', 'queue', 'type', 'attempt', 'createdAt', 'tp')
  local dueAt = (job[1] == 'scheduled' and job[2]) or (job[1] == 'retryable' and job[3])
  if dueAt and tonumber(dueAt) <= now and NEXT_STATES[job[1]].available then
    enter(id, { queue = job[4], createdAt = job[7] }, job[1], 'available', now)
    transitions[#transitions + 1] = transition(id, { type = job[5], queue = job[4], attempt = job[6], tp = job[8] }, job[1], 'available', now)
  end
end
finish()
local nextDue = redis.call('ZRANGE', K.due, 0, 0, 'WITHSCORES')[2]
return { transitions, nextDue or '' }
