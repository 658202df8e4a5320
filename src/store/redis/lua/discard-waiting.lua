--[[
  discard-waiting: a waiting state -> discarded, for waiting jobs past their
  waiting deadline, as the domain decided (timeouts.ts waitingExpiryReport).
  Pre:  per item, the job is still in the state it was found in (a waiting
        state that may move to discarded: domain.lua WAITING, NEXT_STATES);
        other items are skipped.
  Post: the job leaves its indexes and is discarded with the decided error
        and history, recording its fact (with its creation time) and
        counting in its queue's throughput.
  ARGV: 1 now, 2 item count, 3 stride (6), then per item
        (scripts/discard-waiting.ts DISCARD_FIELDS): job id, expected state,
        error JSON, errors JSON, error type, error summary JSON.
  Returns: {transition...}.
  Atomic: one script; every argument is checked before the first write.
]]
local STRIDE = 6
local now = argNow(1)
local n, first = argBatch(2, STRIDE)
local items = {}
for i = first, first + (n - 1) * STRIDE, STRIDE do
  local item = {
    id = argId(i), expected = argMember(i + 1, WAITING), error = argId(i + 2), errors = argId(i + 3), errorType = argId(i + 4), summary = argId(i + 5),
  }
  if not NEXT_STATES[item.expected].discarded then refuse(i + 1, 'is not a state the state machine lets move to discarded') end
  items[#items + 1] = item
end

local transitions = {}
for _, item in ipairs(items) do
  local job = redis.call('HMGET', K.job .. item.id, 'state', 'queue', 'type', 'attempt', 'createdAt', 'tp', 'wf')
  if job[1] == item.expected then
    unindex(item.id, job[2])
    local fields = { 'error', item.error, 'errors', item.errors, 'errorType', item.errorType, 'deadLetter', 0 }
    enter(item.id, { queue = job[2], createdAt = job[5] }, item.expected, 'discarded', now, fields)
    local known = { type = job[3], queue = job[2], attempt = job[4], tp = job[6], wf = job[7] }
    local extra = { error = item.summary, createdAt = job[5], deadLetter = '0' }
    transitions[#transitions + 1] = transition(item.id, known, item.expected, 'discarded', now, extra)
  end
end
finish()
return transitions
