--[[
  Job changes several scripts make, built on lib/ojs.lua: manual changes
  (cancel, activate, retry, one job or many) and the outcomes of attempts
  (fail, recover, remove-worker).
]]

--[[ Manual changes (single and bulk) ]]

-- The job fields a manual change reads, by HMGET position.
local MANUAL_FIELDS = {
  'state', 'leaseWorker', 'queue', 'type', 'attempt', 'startedAt', 'createdAt', 'completedAt', 'tp', 'discardAt', 'ttlAt', 'wf', 'uk', 'us',
}
local function manualJob(id)
  local f = redis.call('HMGET', K.job .. id, unpack(MANUAL_FIELDS))
  return {
    state = f[1], leaseWorker = f[2], queue = f[3], type = f[4], attempt = f[5], startedAt = f[6], createdAt = f[7], completedAt = f[8],
    tp = f[9], discardAt = f[10], ttlAt = f[11], wf = f[12], uk = f[13] or false, us = f[14],
  }
end

--[[
  Cancels job `id` unless it finished (domain.lua NEXT_STATES); cancelling a
  cancelled job changes nothing. An active job's lease is released and its
  worker told (jobsCancelled). Returns status ('ok', 'not_found',
  'invalid_state'), the state it was in, the worker that held it, and the
  transition (none when nothing changed).
]]
local function cancelJob(id, now, actor, reason)
  local job = manualJob(id)
  local from = job.state
  if not from then return 'not_found', '' end
  if from == 'cancelled' then return 'ok', from end
  if not (NEXT_STATES[from] and NEXT_STATES[from].cancelled) then return 'invalid_state', from end
  -- Lease fields outlive their attempt; only an active job's are current.
  local holder = from == 'active' and job.leaseWorker or nil
  if holder then
    releaseLease(id, holder)
    cancelledJobs[holder] = cancelledJobs[holder] or {}
    table.insert(cancelledJobs[holder], id)
  end
  unindex(id, job.queue)
  enter(id, job, from, 'cancelled', now)
  return 'ok', from, holder, transition(id, job, from, 'cancelled', now, { workerId = holder, actor = actor, reason = reason })
end

--[[
  Makes job `id`, if its state is one of `allowed`, available now. A pending
  or discarded job starts afresh (ojs-core 6.3): attempt 0, errors and the
  progress of its last attempt cleared, the waiting deadline of a job that
  never ran (its enqueue TTL applies again). A retryable one keeps its
  attempt and errors and leaves the due index. Returns status, the state it
  was in, and the transition.
]]
local function makeAvailable(id, allowed, now, actor)
  local job = manualJob(id)
  local from = job.state
  if not from then return 'not_found', '' end
  if not allowed[from] then return 'invalid_state', from end
  local fields = {}
  if from == 'retryable' then
    zrem(K.due, id)
  else
    redis.call('HDEL', K.job .. id, 'error', 'errorType', 'progressAttempt')
    fields = { 'attempt', 0, 'errors', '[]' }
    job.attempt = 0
  end
  job.deadline = waitingDeadline(job.discardAt, job.ttlAt, job.attempt)
  enter(id, job, from, 'available', now, fields)
  return 'ok', from, transition(id, job, from, 'available', now, { actor = actor })
end

--[[ Outcomes of attempts (fail, recover, remove-worker) ]]

-- The fields of an outcome item, in order (outcome-items.ts OUTCOME_FIELDS).
local OUTCOME_STRIDE = 10

--[[
  Reads the outcome item whose first field is ARGV[at]: job id, lease token,
  state (one the state machine allows after active), next retry at (for
  retryable; '' otherwise), dead letter (0/1), error JSON, errors JSON, error
  type, error summary JSON (for the fact), most attempts.
]]
local function argOutcome(at)
  local item = { id = argId(at), token = argId(at + 1), state = argMember(at + 2, NEXT_STATES.active) }
  if item.state == 'retryable' then
    item.nextRetryAt = argTime(at + 3)
  elseif argText(at + 3) ~= '' then
    refuse(at + 3, 'must be empty: only a retryable outcome has a retry time')
  end
  item.deadLetter = argFlag(at + 4)
  item.error = argId(at + 5)
  item.errors = argId(at + 6)
  item.errorType = argId(at + 7)
  item.summary = argId(at + 8)
  item.maxAttempts = argCountOf(at + 9)
  return item
end

-- The job fields an outcome needs, by HMGET position.
local OUTCOME_JOB_FIELDS = {
  'state', 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'queue', 'type', 'attempt', 'startedAt', 'createdAt', 'tp', 'wf', 'uk', 'us',
}
local function outcomeJob(id)
  local f = redis.call('HMGET', K.job .. id, unpack(OUTCOME_JOB_FIELDS))
  return {
    state = f[1], leaseWorker = f[2], leaseToken = f[3], leaseExpiresAt = f[4], queue = f[5], type = f[6], attempt = f[7],
    startedAt = f[8], createdAt = f[9], tp = f[10], wf = f[11], uk = f[12] or false, us = f[13],
  }
end

--[[
  Applies a decided outcome to the active job `job` (read by outcomeJob) held
  by `holder`: the lease is released and the job enters the outcome's state
  with its error, history and retry time or dead-letter mark. Returns the
  transition.
]]
local function applyOutcome(item, job, holder, now)
  local fields = { 'error', item.error, 'errors', item.errors, 'errorType', item.errorType }
  local extra = { workerId = holder, error = item.summary, maxAttempts = item.maxAttempts }
  if item.state == 'retryable' then
    fields[#fields + 1] = 'nextRetryAt'
    fields[#fields + 1] = item.nextRetryAt
    extra.nextRetryAt = text(item.nextRetryAt)
  elseif item.state == 'discarded' then
    fields[#fields + 1] = 'deadLetter'
    fields[#fields + 1] = item.deadLetter and 1 or 0
    extra.deadLetter = item.deadLetter and '1' or '0'
  end
  releaseLease(item.id, holder)
  job.nextRetryAt = item.nextRetryAt
  enter(item.id, job, 'active', item.state, now, fields)
  return transition(item.id, job, 'active', item.state, now, extra)
end
