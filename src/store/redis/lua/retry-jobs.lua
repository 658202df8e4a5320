--[[
  retry-jobs: discarded | retryable -> available for a batch of jobs, each
  checked and applied on its own (lib makeAvailable, as make-available
  applies it to one job).
  Pre:  per item, the job exists and is discarded or retryable; other items
        are refused one by one.
  Post: a discarded job starts afresh (attempt 0, errors and progress
        cleared, ojs-core 6.3); a retryable one keeps its attempt and errors
        and runs now instead of at its retry time. Each is back in its ready
        queue and records its fact (with the actor).
  ARGV: 1 now, 2 actor ('' for none), 3 job count, 4 stride (1), 5.. job ids.
  Returns: {{status, current state, transition}...} in item order, where
           status is ok, not_found or invalid_state, and the transition (a
           fact) is present only for ok.
  Bounded: the caller sends at most 1,000 ids. Atomic: one script; every
  argument is checked before the first write.
]]
local now = argNow(1)
local actor = argOptional(2)
local n, first = argBatch(3, 1)
local ids = {}
for i = first, first + n - 1 do ids[#ids + 1] = argId(i) end

local RETRIABLE = { discarded = true, retryable = true }
local results = {}
for _, id in ipairs(ids) do
  local status, state, fact = makeAvailable(id, RETRIABLE, now, actor)
  results[#results + 1] = { status, status == 'ok' and 'available' or state, fact }
end
finish()
return results
