--[[
  recover: active -> retryable | available | discarded for jobs whose lease
  lapsed (or whose worker is gone), as the domain decided.
  Pre:  per item, the job is active with the given lease token and, when the
        item asks, that lease is still expired at `now` (not renewed since
        it was found); other items are skipped.
  Post: the lease is released (capacityFreed) and the job enters the decided
        state (lib applyOutcome), recording its fact.
  ARGV: 1 now, 2 item count, 3 stride (11), then per item an outcome (lib
        argOutcome: job id, lease token, state, next retry at, dead letter,
        error JSON, errors JSON, error type, error summary JSON, most
        attempts) and require expired (0/1) (scripts/recover.ts
        RECOVERY_FIELDS).
  Returns: {transition...} for the jobs recovered.
  Atomic: one script; every argument is checked before the first write.
]]
local STRIDE = OUTCOME_STRIDE + 1
local now = argNow(1)
local n, first = argBatch(2, STRIDE)
local items = {}
for i = first, first + (n - 1) * STRIDE, STRIDE do
  local item = argOutcome(i)
  item.requireExpired = argFlag(i + OUTCOME_STRIDE)
  items[#items + 1] = item
end

local transitions = {}
for _, item in ipairs(items) do
  local job = outcomeJob(item.id)
  local isCurrent = job.state == 'active' and job.leaseToken == item.token and job.leaseWorker
  if isCurrent and not (item.requireExpired and tonumber(job.leaseExpiresAt) > now) then
    transitions[#transitions + 1] = applyOutcome(item, job, job.leaseWorker, now)
  end
end
finish()
return transitions
