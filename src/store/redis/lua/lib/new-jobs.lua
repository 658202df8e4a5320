--[[
  Storing new jobs (enqueue.lua, fire-ticks.lua for a tick's job,
  create-workflow.lua for a workflow's jobs): reading them from ARGV,
  deciding their unique policies, storing them.

  A batch is its job count, then each job: NEW_JOB_HEAD arguments (what the
  script itself works with; '' for none), then the values of the fields
  every job's hash holds, in storeNewJob's order and without their names,
  then the count of the arguments of its other fields, then those fields
  and values (scripts/new-jobs.ts appendNewJobs). The head: id, waiting
  deadline (domain waitingDeadline of a job that never ran: the expiries
  index), scheduled at (the due index), the job's fact (its line as lib
  jobFactLine lays it out: none -> its state; recorded when the log is on,
  '' when it is off), uniqueness key, its policy's states
  (",available,active,"), until (created at + period), the policy's
  period, on conflict (reject, ignore, replace). Of the fields every job
  holds (body, type, queue, priority, created at, visibility timeout,
  execution timeout, grace period, heartbeat timeout, state), the script
  works with the queue, priority, created at (what a scheduled or pending
  job is listed by) and state too.

  The hash arrives whole, in the fields job-codec.ts reads, its enqueue
  time among them: the script stores it as it comes, so a job costs one
  HSET and no Lua per field. The names of the fields every job holds are
  the script's own: a call's arguments cost Redis over a thousand
  instructions each, and those names are the same for every job. What it
  works with itself it checks, as every script checks its arguments; the
  hash's other values are written by the same TypeScript encoder, which
  refuses any value the domain would not have produced.
]]
local NEW_JOB_HEAD = 9
-- Where the values of the fields every job holds (FIXED_FIELDS of them) put those the script reads, from the first.
local FIXED_FIELDS, AT_QUEUE, AT_PRIORITY, AT_CREATED, AT_STATE = 10, 2, 3, 4, 9
-- States a new job may start in: waiting, and never for a retry.
local NEW_JOB_STATES = { scheduled = true, available = true, pending = true }
-- Most hash arguments of one new job: far beyond the fields a job has.
local MAX_NEW_JOB_HASH_ARGS = 64

--[[
  Reads and checks the batch whose job count is the argument at `at`,
  which must end the script's arguments. Returns the jobs, or nil and the
  first id, in batch order, that is taken or repeated.
]]
local function argNewJobs(at)
  local n = argCountOf(at)
  local jobs, seen = {}, {}
  local repeated
  local i = at + 1
  for j = 1, n do
    local fixed = i + NEW_JOB_HEAD
    local job = {
      id = argId(i), deadline = argOptionalTime(i + 1), scheduledAt = argOptionalTime(i + 2), fact = argText(i + 3),
      uk = argOptional(i + 4), us = argOptional(i + 5), uu = argOptionalTime(i + 6), up = argOptionalTime(i + 7), uc = argOptional(i + 8),
      queue = argId(fixed + AT_QUEUE), priority = argInt(fixed + AT_PRIORITY, PRIORITY_MIN, PRIORITY_MAX), createdAt = argNow(fixed + AT_CREATED),
      state = argMember(fixed + AT_STATE, NEW_JOB_STATES), fixedFrom = SETTINGS + fixed,
    }
    if job.uk and not (job.us and (job.uc == 'reject' or job.uc == 'ignore' or job.uc == 'replace')) then
      refuse(i + 8, 'a uniqueness key needs its states and one of reject, ignore, replace')
    end
    if job.state == 'scheduled' and not job.scheduledAt then refuse(i + 2, 'is required for a scheduled job') end
    local countAt = fixed + FIXED_FIELDS
    local count = argInt(countAt, 0, MAX_NEW_JOB_HASH_ARGS)
    if count % 2 ~= 0 then refuse(countAt, 'is not a count of field, value pairs') end
    job.otherFrom = SETTINGS + countAt + 1
    job.otherTo = job.otherFrom + count - 1
    if seen[job.id] and not repeated then repeated = j end
    seen[job.id] = true
    jobs[j] = job
    i = countAt + 1 + count
  end
  if i ~= ownArgCount() + 1 then error({ err = 'BADARG ' .. n .. ' new jobs from ARGV[' .. (at + 1) .. '] do not end at ARGV[' .. ownArgCount() .. ']' }) end
  -- One EXISTS for the batch; the first job taken is looked for only when one is.
  local keys = {}
  for j = 1, n do keys[j] = K.job .. jobs[j].id end
  local taken = 0
  for k = 1, n, 4000 do taken = taken + redis.call('EXISTS', unpack(keys, k, math.min(k + 3999, n))) end
  for j = 1, n do
    if j == repeated or (taken > 0 and redis.call('EXISTS', keys[j]) == 1) then return nil, jobs[j].id end
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

--[[
  Stores a new job: its hash as it came, the index entries of its state
  (as enter() gives them: ready queue, due time, listing, expiry), its
  queue's count, its fact and, if its policy counts its state, its
  uniqueness key.
]]
local function storeNewJob(job, now, seenQueues)
  local id, queue, state = job.id, job.queue, job.state
  if not seenQueues[queue] then
    seenQueues[queue] = true
    zadd(K.queues, 0, queue)
  end
  local v = job.fixedFrom
  redis.call('HSET', K.job .. id, 'body', argv[v], 'type', argv[v + 1], 'queue', argv[v + 2], 'priority', argv[v + 3], 'createdAt', argv[v + 4],
    'vis', argv[v + 5], 'tmo', argv[v + 6], 'grace', argv[v + 7], 'stall', argv[v + 8], 'state', argv[v + 9],
    unpack(argv, job.otherFrom, job.otherTo))
  if state == 'available' then
    zadd(K.ready .. queue, readyScore(job.priority), id)
    available[queue] = (available[queue] or 0) + 1
  else
    if state == 'scheduled' then zadd(K.due, job.scheduledAt, id) end
    relist(id, queue, state, job.createdAt, true)
  end
  if job.deadline then zadd(K.expiries, job.deadline, id) end
  count(queue, nil, state)
  if job.fact ~= '' then record(job.fact) end
  if job.uk and countsIn(job.us, state) then
    local ttl = job.uu and math.max(1, job.uu - now)
    if ttl then redis.call('SET', K.unique .. job.uk, id, 'PX', ttl) else redis.call('SET', K.unique .. job.uk, id) end
  end
end

--[[
  Stores decided jobs (decideUnique) in batch order: a job marked existing
  stores nothing and answers with the existing job; one that replaces a
  holder that has not finished cancels it first (reason "replaced").
  Returns per job 'stored' | {'existing', job hash} | {'replaced', transition}:
  a stored job's outcome is bare text, since Redis turns each table of a
  reply into an array only after seven lookups of its own.
]]
local function storeNewJobs(jobs, now)
  local seenQueues = {}
  local outcomes = {}
  for j, job in ipairs(jobs) do
    if job.existing then
      outcomes[j] = { 'existing', redis.call('HGETALL', K.job .. job.existing) }
    else
      outcomes[j] = 'stored'
      if job.replaces and not TERMINAL[job.replaces.state] then
        local status, _, _, replaced = cancelJob(job.replaces.id, now, nil, 'replaced')
        if status == 'ok' and replaced then outcomes[j] = { 'replaced', replaced } end
      end
      storeNewJob(job, now, seenQueues)
    end
  end
  return outcomes
end
