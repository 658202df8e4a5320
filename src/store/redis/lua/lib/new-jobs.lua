--[[
  Storing new jobs (enqueue.lua, and fire-ticks.lua for a tick's job):
  reading them from ARGV, deciding their unique policies, storing them.
  Each job takes NEW_JOB_STRIDE arguments (scripts/new-jobs.ts
  NEW_JOB_FIELDS), '' for none: id, queue, state, priority, discardAt,
  ttlAt, scheduledAt, type, vis, tmo, grace, stall, totalAt, created at,
  traceparent (meta.traceparent, copied so that scripts never read the
  body), body JSON, uniqueness key, its policy's states
  (",available,active,"), until (created at + period), the policy's
  period, on conflict (reject, ignore, replace), the schedule that made it
  (meta.cron_name, copied for listings), its workflow link ("<workflow
  id>|<node>", Job.workflow: lib/workflows.lua). Separate values rather
  than one string to split: the script does no parsing.
]]
local NEW_JOB_STRIDE = 23

--[[
  Reads and checks `n` new jobs whose fields start at argument `first`.
  Returns the jobs, or nil and the first id that is taken or repeated.
]]
local function argNewJobs(n, first)
  local jobs = {}
  local seen = {}
  for j = 0, n - 1 do
    local i = first + j * NEW_JOB_STRIDE
    local job = {
      id = argId(i), queue = argId(i + 1), state = argMember(i + 2, WAITING), priority = argInt(i + 3, PRIORITY_MIN, PRIORITY_MAX),
      discardAt = argOptionalTime(i + 4), ttlAt = argOptionalTime(i + 5), scheduledAt = argOptionalTime(i + 6), type = argId(i + 7),
      vis = argTime(i + 8), tmo = argTime(i + 9), grace = argTime(i + 10), stall = argTime(i + 11), totalAt = argOptionalTime(i + 12),
      createdAt = argNow(i + 13), tp = argOptional(i + 14), body = argId(i + 15),
      uk = argOptional(i + 16), us = argOptional(i + 17), uu = argOptionalTime(i + 18), up = argOptionalTime(i + 19),
      uc = argOptional(i + 20), cron = argOptional(i + 21), wf = argOptional(i + 22),
    }
    if job.uk and not (job.us and (job.uc == 'reject' or job.uc == 'ignore' or job.uc == 'replace')) then
      refuse(i + 20, 'a uniqueness key needs its states and one of reject, ignore, replace')
    end
    -- A new job has never run, so it cannot be waiting for a retry.
    if job.state == 'retryable' then refuse(i + 2, 'is not a state a new job starts in') end
    if job.state == 'scheduled' and not job.scheduledAt then refuse(i + 6, 'is required for a scheduled job') end
    if seen[job.id] or redis.call('EXISTS', K.job .. job.id) == 1 then return nil, job.id end
    seen[job.id] = true
    jobs[#jobs + 1] = job
  end
  return jobs
end

--[[
  Decides every job with a uniqueness key, in batch order, against the job
  holding it: a job of the store (read) or an earlier one of the batch. A
  holder is a duplicate while it is in the new job's states, within the
  new policy's period from its creation and within its own. Marks each job
  `existing` (ignore: the holder's id) or `replaces` (the holder); returns
  nil, or the refusal of the first duplicate under reject:
  {'unique', job index, holder id, holder state, key}. Reads only.
]]
local function decideUnique(jobs, now)
  local takenByBatch = {}
  for j, job in ipairs(jobs) do
    if job.uk then
      local holder = takenByBatch[job.uk]
      if not holder then
        local id = redis.call('GET', K.unique .. job.uk)
        local f = id and redis.call('HMGET', K.job .. id, 'state', 'createdAt', 'uu')
        if f and f[1] then holder = { id = id, state = f[1], createdAt = tonumber(f[2]), uu = f[3] and tonumber(f[3]) } end
      end
      local isDuplicate = holder and countsIn(job.us, holder.state) and (not job.up or holder.createdAt + job.up > now)
        and (not holder.uu or holder.uu > now)
      if isDuplicate and job.uc == 'reject' then return { 'unique', j - 1, holder.id, holder.state, job.uk } end
      if isDuplicate and job.uc == 'ignore' then
        job.existing = holder.id
      else
        if isDuplicate then job.replaces = holder end
        takenByBatch[job.uk] = { id = job.id, state = job.state, createdAt = job.createdAt, uu = job.uu }
      end
    end
  end
  return nil
end

-- Stores a new job and, if its policy counts its state, gives it its uniqueness key.
local function storeNewJob(job, now, seenQueues)
  -- attempt 0, no errors and no dead-letter mark are what absent fields mean.
  local fields = {
    'body', job.body, 'type', job.type, 'vis', job.vis, 'tmo', job.tmo, 'grace', job.grace, 'stall', job.stall,
    'queue', job.queue, 'priority', job.priority, 'createdAt', job.createdAt,
  }
  local optional = {
    discardAt = job.discardAt, ttlAt = job.ttlAt, scheduledAt = job.scheduledAt, totalAt = job.totalAt, tp = job.tp, uk = job.uk,
    us = job.uk and job.us, uu = job.uk and job.uu, cron = job.cron, wf = job.wf,
  }
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
  if job.uk and countsIn(job.us, job.state) then
    local ttl = job.uu and math.max(1, job.uu - now)
    if ttl then redis.call('SET', K.unique .. job.uk, job.id, 'PX', ttl) else redis.call('SET', K.unique .. job.uk, job.id) end
  end
end

--[[
  Stores decided jobs (decideUnique) in batch order: a job marked existing
  stores nothing and answers with the existing job; one that replaces a
  holder that has not finished cancels it first (reason "replaced").
  Returns per job {'stored'} | {'existing', job hash} | {'replaced', transition}.
]]
local function storeNewJobs(jobs, now)
  local seenQueues = {}
  local outcomes = {}
  for j, job in ipairs(jobs) do
    if job.existing then
      outcomes[j] = { 'existing', redis.call('HGETALL', K.job .. job.existing) }
    else
      outcomes[j] = { 'stored' }
      if job.replaces and not TERMINAL[job.replaces.state] then
        local status, _, _, replaced = cancelJob(job.replaces.id, now, nil, 'replaced')
        if status == 'ok' and replaced then outcomes[j] = { 'replaced', replaced } end
      end
      storeNewJob(job, now, seenQueues)
    end
  end
  return outcomes
end
