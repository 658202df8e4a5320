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
  Returns: {status, current state, transition, ...}: three elements per
           item, in item order, where status is ok, not_found, not_active,
           other_worker or stale_lease, and the transition (a fact as lib
           transition() builds it) is '' unless ok. Flat: Redis turns each
           table of a reply into its own array after seven lookups, a price
           paid per item when each item is a table.
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

-- The batch's index changes, one command per index at the end (see claim.lua: each job meets each once).
local ids, leftActive, completedAll, completedOf, doneIn = {}, {}, {}, {}, {}
local nowText = text(now)
local listedAt = listingKey(now, '')
local results = {}
for _, item in ipairs(items) do
  local id = item.id
  local key = K.job .. id
  local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'leaseToken', 'queue', 'type', 'attempt', 'progressAttempt', 'startedAt',
    'tp', 'wf', 'uk', 'us')
  local problem = not job[1] and 'not_found' or leaseProblem(job[1], job[2], job[3], workerId, item.token)
  if problem then
    local r = #results
    results[r + 1], results[r + 2], results[r + 3] = problem, job[1] or '', ''
  else
    local queue, attempt, startedAt = job[4], job[6], job[8]
    -- The change enter() makes from active to completed, for a batch: state and time, listings, counts.
    -- ojs-progress 8.1: a completed job that reported progress is at 1.0.
    local hasProgress = job[7] and job[7] == attempt
    if item.result ~= '' and hasProgress then
      redis.call('HSET', key, 'state', 'completed', 'completedAt', nowText, 'result', item.result, 'progress', '1')
    elseif item.result ~= '' then
      redis.call('HSET', key, 'state', 'completed', 'completedAt', nowText, 'result', item.result)
    elseif hasProgress then
      redis.call('HSET', key, 'state', 'completed', 'completedAt', nowText, 'progress', '1')
    else
      redis.call('HSET', key, 'state', 'completed', 'completedAt', nowText)
    end
    ids[#ids + 1] = id
    leftActive[#leftActive + 1] = listingKey(startedAt, id)
    local listed = listedAt .. id
    local n = #completedAll
    completedAll[n + 1], completedAll[n + 2] = '0', listed
    local ofQueue = completedOf[queue]
    if not ofQueue then
      ofQueue = {}
      completedOf[queue] = ofQueue
    end
    n = #ofQueue
    ofQueue[n + 1], ofQueue[n + 2] = '0', listed
    doneIn[queue] = (doneIn[queue] or 0) + 1
    if job[11] then releaseUnique(id, 'completed', { uk = job[11], us = job[12] }) end
    local fact = jobFactLine(nowText, id, job[5], queue, 'active', 'completed', attempt, workerId, nil, nil, nil, nil, startedAt, nil, nil, nil,
      nil, nil, nil, job[9])
    record(fact)
    if job[10] then workflowSettled(id, { type = job[5], queue = queue, attempt = attempt, startedAt = startedAt, tp = job[9], wf = job[10] }, 'completed', now) end
    local r = #results
    results[r + 1], results[r + 2], results[r + 3] = 'ok', 'completed', fact
  end
end
-- The leases released (lib releaseLease, for the batch).
callChunked('ZREM', K.leases, ids)
callChunked('ZREM', K.timeouts, ids)
callChunked('SREM', K.held .. workerId, ids)
if #ids > 0 then freed[workerId] = (freed[workerId] or 0) + #ids end
callChunked('ZREM', K.listing .. 'active', leftActive)
callChunked('ZADD', K.listing .. 'completed', completedAll)
for queue, members in pairs(completedOf) do callChunked('ZADD', K.listing .. 'completed:' .. queue, members) end
-- Each queue's completions, counted in its throughput once.
for queue, n in pairs(doneIn) do
  count(queue, 'active', 'completed', n)
  stat(queue, now, 'completed', n)
end
finish()
return results
