--[[
  cancel-jobs: -> cancelled for a batch of jobs, each checked and applied on
  its own (lib cancelJob, as cancel applies it to one job).
  Pre:  per item, the job exists and its state may move to cancelled; a
        cancelled job counts as done and changes nothing; other items are
        refused one by one.
  Post: each cancelled job leaves its indexes and records its fact (actor,
        reason, and the worker that held it); an active job's lease is
        released and its worker told, one jobsCancelled per worker.
  ARGV: 1 now, 2 actor ('' for none), 3 reason ('' for none), 4 job count,
        5 stride (1), 6.. job ids.
  Returns: {{status, current state, transition}...} in item order, where
           status is ok, not_found or invalid_state, and the transition (a
           fact) is present only for a job this call cancelled.
  Bounded: the caller sends at most 1,000 ids. Atomic: one script; every
  argument is checked before the first write.
]]
local now = argNow(1)
local actor = argOptional(2)
local reason = argOptional(3)
local n, first = argBatch(4, 1)
local ids = {}
for i = first, first + n - 1 do ids[#ids + 1] = argId(i) end

local results = {}
for _, id in ipairs(ids) do
  local status, state, _, fact = cancelJob(id, now, actor, reason)
  results[#results + 1] = { status, status == 'ok' and 'cancelled' or state, fact }
end
finish()
return results
