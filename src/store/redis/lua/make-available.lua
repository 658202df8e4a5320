--[[
  make-available: pending -> available (ActivateJob) or discarded ->
  available (RetryJob from the dead letter set): store.activate() and
  store.retry() (lib makeAvailable, which retry-jobs applies to many).
  Pre:  the job exists and is in the expected state, one from which the state
        machine allows available (domain.lua NEXT_STATES); a pending job of
        a workflow waits for its workflow (lib/workflows.lua), never for this.
  Post: a fresh start (ojs-core 6.3): attempt 0, errors and the progress of
        the last attempt cleared (a pending job has none of them yet); back in
        its ready queue, with the waiting deadline of a job that never ran
        (its enqueue TTL applies again); the fact is recorded.
  ARGV: 1 now, 2 job id, 3 expected state.
  Returns: {'not_found'} | {'invalid_state', state} | {'waits_for_workflow', workflow id} |
           {'ok', previous state, '', job hash}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(3)
local now = argNow(1)
local id = argId(2)
local expected = argMember(3, { pending = true, discarded = true })
if expected == 'pending' then
  local f = redis.call('HMGET', K.job .. id, 'state', 'wf')
  if f[1] == 'pending' and f[2] then return { 'waits_for_workflow', (Workflow.link(f[2])) } end
end
local status, from = makeAvailable(id, { [expected] = true }, now)
if status ~= 'ok' then return { status, from } end
finish()
return { 'ok', from, '', redis.call('HGETALL', K.job .. id) }
