--[[
  cancel: any state the state machine lets move to cancelled -> cancelled
  (domain.lua NEXT_STATES).
  Pre:  the job exists and its state may move to cancelled; cancelling a
        cancelled job changes nothing.
  Post: the job leaves its indexes; an active job's lease is released and its
        worker is told (jobsCancelled); completed_at is set.
  ARGV: 1 now, 2 job id.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', previous state, previous holder, job hash}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(2)
local now = argNow(1)
local id = argId(2)
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'queue')
local from = job[1]
if not from then return { 'not_found' } end
if from == 'cancelled' then return { 'ok', from, '', redis.call('HGETALL', key) } end
if not (NEXT_STATES[from] and NEXT_STATES[from].cancelled) then return { 'invalid_state', from } end
-- Lease fields outlive their attempt; only an active job's are current.
local holder = from == 'active' and job[2] or nil
if holder then
  releaseLease(id, holder)
  signals[#signals + 1] = { k = 'x', w = holder, j = { id } }
end
unindex(id, job[3])
enter(id, { queue = job[3] }, from, 'cancelled', now)
finish()
return { 'ok', from, holder or '', redis.call('HGETALL', key) }
