--[[
  discard-waiting: scheduled | available | pending | retryable -> discarded,
  for waiting jobs past their waiting deadline, as the domain decided
  (timeouts.ts waitingExpiryReport).
  Pre:  per item, the job is still in the state it was found in.
  Post: the job leaves its indexes and is discarded with the decided error
        and history.
  ARGV: 1 now, then per item: id, expected state, error JSON, errors JSON.
  Returns: {transition...}.
]]
local now = ARGV[1]
local transitions = {}
for i = 2, #ARGV, 4 do
  local id, expected = ARGV[i], ARGV[i + 1]
  local job = redis.call('HMGET', K.job .. id, 'state', 'queue', 'type', 'attempt')
  if job[1] == expected and WAITING[expected] then
    unindex(id, job[2])
    enter(id, { queue = job[2] }, expected, 'discarded', now, { 'error', ARGV[i + 2], 'errors', ARGV[i + 3], 'deadLetter', 0 })
    transitions[#transitions + 1] = transition(id, expected, 'discarded', nil, { job[3], job[2], job[4] })
  end
end
finish()
return transitions
