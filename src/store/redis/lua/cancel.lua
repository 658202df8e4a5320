--[[
  cancel: scheduled | available | pending | active | retryable -> cancelled.
  Pre:  the job exists and its state may move to cancelled (the states are
        passed in from the domain state machine); cancelling a cancelled job
        changes nothing.
  Post: the job leaves its indexes; an active job's lease is released and its
        worker is told (jobsCancelled); completed_at is set.
  ARGV: 1 now, 2 job id, 3 states that may move to cancelled, comma-separated.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', previous state, previous holder, job hash}.
]]
local id = ARGV[2]
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'queue')
local from = job[1]
if not from then return { 'not_found' } end
if from == 'cancelled' then return { 'ok', from, '', redis.call('HGETALL', key) } end
if not string.find(',' .. ARGV[3] .. ',', ',' .. from .. ',', 1, true) then return { 'invalid_state', from } end
-- Lease fields outlive their attempt; only an active job's are current.
local holder = from == 'active' and job[2] or nil
if holder then
  releaseLease(id, holder)
  signals[#signals + 1] = { k = 'x', w = holder, j = { id } }
end
unindex(id, job[3])
enter(id, { queue = job[3] }, from, 'cancelled', ARGV[1])
finish()
return { 'ok', from, holder or '', redis.call('HGETALL', key) }
