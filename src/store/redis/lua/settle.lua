--[[
  settle: active -> completed | retryable | available | discarded, for a batch.
  The one script for every way an attempt ends, so that releasing a lease
  and entering the next state are written once:
    ack      completes jobs held by the worker (state "completed", a result)
    fail     applies decided failure outcomes to jobs held by the worker
    recover  applies outcomes to jobs whose lease token still matches, and,
             when an item asks, whose lease is still expired at `now`
    remove   removes a worker and applies outcomes to every job it holds
  Pre:  per item, the precondition of its mode; for remove, the worker exists,
        has not beaten since `ifLastBeatAt` (when given) and every job it
        holds has an item.
  Post: the lease is released (capacityFreed), the job enters its new state
        with error, errors, next_retry_at, dead_letter or result as decided by
        the domain (fields its new state does not show stay, unread: see
        job-codec.ts decodeJob); removed workers are signalled.
  ARGV: 1 now, 2 mode, 3 worker id, 4 ifLastBeatAt ('' for none), 5 item count,
        then per item for ack: id, lease token, result JSON ('' for none);
        for the other modes: id, lease token, state, next retry at, dead
        letter (0/1), error JSON, errors JSON, require expired (0/1).
  Returns: {'ok', removed (0/1), {{status, current state, transition}...}}
           where status is ok, not_found, not_active, other_worker, stale_lease
           or skipped; {'ok', 0, {}} when a removal's precondition fails.
]]
local now = ARGV[1]
local mode = ARGV[2]
local workerId = ARGV[3]
local isAck = mode == 'ack'
local stride = isAck and 3 or 8
local items = {}
for i = 6, 5 + stride * tonumber(ARGV[5]), stride do
  if isAck then
    items[#items + 1] = { id = ARGV[i], token = ARGV[i + 1], state = 'completed', result = ARGV[i + 2] }
  else
    items[#items + 1] = {
      id = ARGV[i], token = ARGV[i + 1], state = ARGV[i + 2], nextRetryAt = ARGV[i + 3], deadLetter = ARGV[i + 4],
      error = ARGV[i + 5], errors = ARGV[i + 6], requireExpired = ARGV[i + 7] == '1',
    }
  end
end

if mode == 'remove' then
  local lastBeatAt = redis.call('HGET', K.worker .. workerId, 'lastBeatAt')
  if not lastBeatAt or (ARGV[4] ~= '' and lastBeatAt ~= ARGV[4]) then return { 'ok', 0, {} } end
  local covered = {}
  for _, item in ipairs(items) do covered[item.id] = true end
  for _, id in ipairs(redis.call('SMEMBERS', K.held .. workerId)) do
    if not covered[id] then return { 'ok', 0, {} } end
  end
end

local results = {}
for _, item in ipairs(items) do
  local job = redis.call('HMGET', K.job .. item.id, 'state', 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'queue', 'type', 'attempt', 'progressAttempt', 'startedAt')
  local holder = job[2]
  local status
  if not job[1] then
    status = 'not_found'
  elseif mode == 'recover' then
    if job[1] ~= 'active' or job[3] ~= item.token or (item.requireExpired and tonumber(job[4]) > tonumber(now)) then status = 'skipped' end
  else
    status = leaseProblem(job[1], holder, job[3], workerId, item.token)
  end
  if status then
    results[#results + 1] = { status, job[1] or '' }
  else
    local fields
    if item.state == 'completed' then
      fields = item.result ~= '' and { 'result', item.result } or {}
      -- ojs-progress 8.1: a completed job that reported progress is at 1.0.
      if job[8] and job[8] == job[7] then
        fields[#fields + 1] = 'progress'
        fields[#fields + 1] = 1
      end
    else
      fields = { 'error', item.error, 'errors', item.errors }
      if item.state == 'retryable' then
        fields[#fields + 1] = 'nextRetryAt'
        fields[#fields + 1] = item.nextRetryAt
      elseif item.state == 'discarded' then
        fields[#fields + 1] = 'deadLetter'
        fields[#fields + 1] = item.deadLetter
      end
    end
    releaseLease(item.id, holder)
    enter(item.id, { queue = job[5], nextRetryAt = item.nextRetryAt }, 'active', item.state, now, fields)
    results[#results + 1] = { 'ok', item.state, transition(item.id, 'active', item.state, holder, { job[6], job[5], job[7], job[9] }) }
  end
end

local removed = 0
if mode == 'remove' then
  redis.call('DEL', K.worker .. workerId, K.held .. workerId)
  redis.call('ZREM', K.workers, workerId)
  pending.srem[K.held .. workerId] = nil
  freed[workerId] = nil
  signals[#signals + 1] = { k = 'r', w = workerId }
  removed = 1
end
finish()
return { 'ok', removed, results }
