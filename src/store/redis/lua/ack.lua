--[[
  ack: active -> completed, for a batch of jobs the worker holds.
  Pre:  per item, the worker holds the job's current lease (domain
        leaseProblem); items that fail it are refused one by one.
  Post: the lease is released (capacityFreed), the job is completed with its
        result; a job that reported progress in this attempt is at 1.0
        (ojs-progress 8.1). A workflow job's node succeeds, its result
        copied to the workflow, which advances (lib/workflows.lua). Fields a completed job does not show stay, unread
        (job-codec.ts decodeJob). Each completion records its fact and
        counts in its queue's throughput.
  ARGV: 1 now, 2 worker id, 3 item count, 4 stride (3), then per item
        (scripts/ack.ts ACK_FIELDS): job id, lease token, result JSON ('' for none).
  Returns: {{status, current state, transition}...} in item order, where
           status is ok, not_found, not_active, other_worker or stale_lease
           (and the transition, a fact as lib transition() builds it, is
           present only for ok).
  Atomic: one script; every argument is checked before the first write.
]]
local STRIDE = 3
local now = argNow(1)
local workerId = argId(2)
local n, first = argBatch(3, STRIDE)
local items = {}
for i = first, first + (n - 1) * STRIDE, STRIDE do
  items[#items + 1] = { id = argId(i), token = argId(i + 1), result = argText(i + 2) }
end

local results = {}
for _, item in ipairs(items) do
  local job = redis.call('HMGET', K.job .. item.id, 'state', 'leaseWorker', 'leaseToken', 'queue', 'type', 'attempt', 'progressAttempt', 'startedAt',
    'createdAt', 'tp', 'wf', 'uk', 'us')
  local problem = not job[1] and 'not_found' or leaseProblem(job[1], job[2], job[3], workerId, item.token)
  if problem then
    results[#results + 1] = { problem, job[1] or '' }
  else
    local fields = item.result ~= '' and { 'result', item.result } or {}
    -- ojs-progress 8.1: a completed job that reported progress is at 1.0.
    if job[7] and job[7] == job[6] then
      fields[#fields + 1] = 'progress'
      fields[#fields + 1] = 1
    end
    releaseLease(item.id, workerId)
    enter(item.id, { queue = job[4], createdAt = job[9], startedAt = job[8], uk = job[12] or false, us = job[13] }, 'active', 'completed', now, fields)
    local known = { type = job[5], queue = job[4], attempt = job[6], startedAt = job[8], tp = job[10], wf = job[11] }
    results[#results + 1] = { 'ok', 'completed', transition(item.id, known, 'active', 'completed', now, { workerId = workerId }) }
  end
end
finish()
return results
