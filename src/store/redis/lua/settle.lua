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
        the domain; removed workers are signalled.
  ARGV: 1 now, 2 mode, 3 worker id, 4 ifLastBeatAt ('' for none), 5 item count,
        then per item: id, lease token, state, next retry at, dead letter (0/1),
        error JSON, errors JSON, result JSON ('' for none), require expired (0/1).
  Returns: {'ok', removed (0/1), {{status, current state, transition...}...}}
           where status is ok, not_found, not_active, other_worker, stale_lease
           or skipped; {'ok', 0, {}} when a removal's precondition fails.
]]
local now = ARGV[1]
local mode = ARGV[2]
local workerId = ARGV[3]
local items = {}
for i = 6, 5 + 9 * tonumber(ARGV[5]), 9 do
  items[#items + 1] = {
    id = ARGV[i], token = ARGV[i + 1], state = ARGV[i + 2], nextRetryAt = ARGV[i + 3], deadLetter = ARGV[i + 4],
    error = ARGV[i + 5], errors = ARGV[i + 6], result = ARGV[i + 7], requireExpired = ARGV[i + 8] == '1',
  }
end

if mode == 'remove' then
  local workerKey = K.worker .. workerId
  local lastBeatAt = redis.call('HGET', workerKey, 'lastBeatAt')
  if not lastBeatAt or (ARGV[4] ~= '' and lastBeatAt ~= ARGV[4]) then return { 'ok', 0, {} } end
  local covered = {}
  for _, item in ipairs(items) do covered[item.id] = true end
  for _, id in ipairs(redis.call('SMEMBERS', K.held .. workerId)) do
    if not covered[id] then return { 'ok', 0, {} } end
  end
end

local results = {}
for _, item in ipairs(items) do
  local key = K.job .. item.id
  local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'queue')
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
    releaseLease(item.id, holder)
    redis.call('HDEL', key, 'nextRetryAt')
    if item.state == 'completed' then
      redis.call('HDEL', key, 'error')
      if item.result ~= '' then redis.call('HSET', key, 'result', item.result) else redis.call('HDEL', key, 'result') end
    else
      redis.call('HSET', key, 'error', item.error, 'errors', item.errors)
      if item.state == 'retryable' then redis.call('HSET', key, 'nextRetryAt', item.nextRetryAt) end
      if item.state == 'discarded' then redis.call('HSET', key, 'deadLetter', item.deadLetter) end
    end
    enter(item.id, job[5], 'active', item.state, now)
    results[#results + 1] = { 'ok', item.state, transition(item.id, 'active', item.state, holder) }
  end
end

local removed = 0
if mode == 'remove' then
  redis.call('DEL', K.worker .. workerId, K.held .. workerId)
  redis.call('ZREM', K.workers, workerId)
  freed[workerId] = nil
  signals[#signals + 1] = { k = 'r', w = workerId }
  removed = 1
end
publishSignals()
return { 'ok', removed, results }
