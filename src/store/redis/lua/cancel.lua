--[[
  cancel: any state the state machine lets move to cancelled -> cancelled
  (domain.lua NEXT_STATES), for one job: store.cancel (lib cancelJob, which
  cancel-jobs applies to many).
  Pre:  the job exists and its state may move to cancelled; cancelling a
        cancelled job changes nothing.
  Post: the job leaves its indexes; an active job's lease is released and its
        worker is told (jobsCancelled); completed_at is set; the fact is
        recorded.
  ARGV: 1 now, 2 job id.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', previous state, previous holder, job hash}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(2)
local now = argNow(1)
local id = argId(2)
local status, from, holder = cancelJob(id, now)
if status ~= 'ok' then return { status, from } end
finish()
return { 'ok', from, holder or '', redis.call('HGETALL', K.job .. id) }
