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
  Returns: {status, current state, transition, ...}: three elements per
           item, in item order, as ack.lua's (the transition '' unless ok).
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
  local r = #results
  if problem then
    results[r + 1], results[r + 2], results[r + 3] = problem, job.state or '', ''
  else
    results[r + 1], results[r + 2], results[r + 3] = 'ok', item.state, applyOutcome(item, job, workerId, now)
  end
end
finish()
return results
