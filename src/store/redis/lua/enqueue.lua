--[[
  enqueue: (none) -> scheduled | available | pending, for a batch of jobs.
  Pre:  every argument is valid; no id of the batch is taken, nor repeated
        within it (all or none are stored).
  Post: each job hash is written and indexed by its state (ready queue, or
        due time and listing indexes) and its waiting deadline; per-queue
        counters and the queue index are updated; one jobsAvailable signal
        per queue; one fact per job (none -> its state, with its priority and
        scheduled time) when the log is on.
  ARGV: 1 now, 2 job count, 3 stride (16), then per job (scripts/enqueue.ts
        NEW_JOB_FIELDS), '' for none: id, queue, state, priority, discardAt,
        ttlAt, scheduledAt, type, vis, tmo, grace, stall, totalAt, created
        at, traceparent (meta.traceparent, copied so that scripts never read
        the body), body JSON. Separate values rather than one string to
        split: the script does no parsing.
  Returns: {'ok'} | {'duplicate', id}.
  Atomic: the script runs alone, and every key shares the prefix's hash slot;
  every argument is checked before the first write.
]]
local STRIDE = 16
local now = argNow(1)
local n, first = argBatch(2, STRIDE)
local jobs = {}
local seen = {}
for j = 0, n - 1 do
  local i = first + j * STRIDE
  local job = {
    id = argId(i), queue = argId(i + 1), state = argMember(i + 2, WAITING), priority = argInt(i + 3, PRIORITY_MIN, PRIORITY_MAX),
    discardAt = argOptionalTime(i + 4), ttlAt = argOptionalTime(i + 5), scheduledAt = argOptionalTime(i + 6), type = argId(i + 7),
    vis = argTime(i + 8), tmo = argTime(i + 9), grace = argTime(i + 10), stall = argTime(i + 11), totalAt = argOptionalTime(i + 12),
    createdAt = argNow(i + 13), tp = argOptional(i + 14), body = argId(i + 15),
  }
  -- A new job has never run, so it cannot be waiting for a retry.
  if job.state == 'retryable' then refuse(i + 2, 'is not a state a new job starts in') end
  if job.state == 'scheduled' and not job.scheduledAt then refuse(i + 6, 'is required for a scheduled job') end
  if seen[job.id] or redis.call('EXISTS', K.job .. job.id) == 1 then return { 'duplicate', job.id } end
  seen[job.id] = true
  jobs[#jobs + 1] = job
end

local seenQueues = {}
for _, job in ipairs(jobs) do
  -- attempt 0, no errors and no dead-letter mark are what absent fields mean.
  local fields = {
    'body', job.body, 'type', job.type, 'vis', job.vis, 'tmo', job.tmo, 'grace', job.grace, 'stall', job.stall,
    'queue', job.queue, 'priority', job.priority, 'createdAt', job.createdAt,
  }
  local optional = { discardAt = job.discardAt, ttlAt = job.ttlAt, scheduledAt = job.scheduledAt, totalAt = job.totalAt, tp = job.tp }
  for name, value in pairs(optional) do
    fields[#fields + 1] = name
    fields[#fields + 1] = value
  end
  if not seenQueues[job.queue] then
    seenQueues[job.queue] = true
    zadd(K.queues, 0, job.queue)
  end
  local deadline = waitingDeadline(job.discardAt, job.ttlAt, 0)
  enter(job.id, { queue = job.queue, priority = job.priority, deadline = deadline, scheduledAt = job.scheduledAt, createdAt = job.createdAt }, nil,
    job.state, now, fields)
  if isLogging() then
    transition(job.id, job, 'none', job.state, now, { priority = job.priority, scheduledAt = job.state == 'scheduled' and text(job.scheduledAt) })
  end
end
finish()
return { 'ok' }
