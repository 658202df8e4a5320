--[[
  discard-waiting: a waiting state -> discarded, for waiting jobs past their
  waiting deadline, as the domain decided (timeouts.ts waitingExpiryReport).
  Pre:  per item, the job is still in the state it was found in (a waiting
        state that may move to discarded: domain.lua WAITING, NEXT_STATES);
        other items are skipped.
  Post: the job leaves its indexes and is discarded with the decided error
        and history.
  ARGV: 1 now, 2 item count, 3 stride (4), then per item
        (scripts/discard-waiting.ts DISCARD_FIELDS): job id, expected state,
        error JSON, errors JSON.
  Returns: {transition...}.
  Atomic: one script; every argument is checked before the first write.
]]
local STRIDE = 4
local now = argNow(1)
local n, first = argBatch(2, STRIDE)
local items = {}
for i = first, first + (n - 1) * STRIDE, STRIDE do
  local item = { id = argId(i), expected = argMember(i + 1, WAITING), error = argId(i + 2), errors = argId(i + 3) }
  if not NEXT_STATES[item.expected].discarded then refuse(i + 1, 'is not a state the state machine lets move to discarded') end
  items[#items + 1] = item
end

local transitions = {}
for _, item in ipairs(items) do
  local job = redis.call('HMGET', K.job .. item.id, 'state', 'queue', 'type', 'attempt')
  if job[1] == item.expected then
    unindex(item.id, job[2])
    enter(item.id, { queue = job[2] }, item.expected, 'discarded', now, { 'error', item.error, 'errors', item.errors, 'deadLetter', 0 })
    transitions[#transitions + 1] = transition(item.id, item.expected, 'discarded', nil, { job[3], job[2], job[4] })
  end
end
finish()
return transitions
