--[[
  fail: active -> retryable | available | discarded, for a batch of jobs the
  worker holds, as the domain decided (failure.ts decideFailure).
  Pre:  per item, the worker holds the job's current lease (domain
        leaseProblem); items that fail it are refused one by one.
  Post: the lease is released (capacityFreed) and the job enters the decided
        state with its error, history and retry time or dead-letter mark
        (lib applyOutcome), recording its fact and counting a failed attempt
        (and a discarded job) in its queue's throughput.
  ARGV: 1 now, 2 worker id, 3 item count, 4 stride (10), then per item an
        outcome (scripts/outcome-items.ts OUTCOME_FIELDS; lib argOutcome):
        job id, lease token, state, next retry at, dead letter (0/1), error
        JSON, errors JSON, error type, error summary JSON, most attempts.
  Returns: {{status, current state, transition}...} in item order, where
           status is ok, not_found, not_active, other_worker or stale_lease
           (and the transition is present only for ok).
  Atomic: one script; every argument is checked before the first write.
]]
local now = argNow(1)
local workerId = argId(2)
local n, first = argBatch(3, OUTCOME_STRIDE)
local items = {}
for i = first, first + (n - 1) * OUTCOME_STRIDE, OUTCOME_STRIDE do items[#items + 1] = argOutcome(i) end

local results = {}
for _, item in ipairs(items) do
  local job = outcomeJob(item.id)
  local problem = not job.state and 'not_found' or leaseProblem(job.state, job.leaseWorker, job.leaseToken, workerId, item.token)
  if problem then
    results[#results + 1] = { problem, job.state or '' }
  else
    results[#results + 1] = { 'ok', item.state, applyOutcome(item, job, workerId, now) }
  end
end
finish()
return results
