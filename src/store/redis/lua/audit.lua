--[[
  audit (read only): every broken invariant of the deployment's data, as
  sentences (store port audit). A diagnostic that reads everything: for
  tests and operators, never for the hot path.
  Checks: every key under the prefix belongs to a structure of the store
  (and has its type); each job hash has a known state and the fields the
  scripts need, and is in exactly the indexes its state asks for: its
  queue's ready set iff available (with a score of its priority); the due
  set iff scheduled or retryable (scored by its time); the expiries iff
  waiting with a waiting deadline (scored by it); the leases iff active
  (scored by its expiry), held by a registered worker whose held set lists
  it; the soft timeouts only if active (scored by softTimeoutAt); unless
  available (listed by its ready set), the listing index of its state, and
  of its state and queue unless active, under its listing key, and no other
  listing index. Counters equal the real counts per queue
  and state; the queue index lists exactly the queues that hold jobs or are
  paused; both worker indexes list exactly the registered workers (by last
  beat, and by id); held sets belong to registered workers and list only
  jobs active under their lease, never more than the worker's concurrency.
  Throughput minutes hold only their three counts and expire within their
  lifetime; rate-limit event sampling belongs to a queue with limits, and
  expires unless an episode is open; the event log holds about its length of facts at most (lib
  trimStep, and approximate trimming keeps up to one stream node more), and
  its last position is at least that of its newest fact. Workflows: a run
  and a plan each, or neither; the run's counters are its nodes' (jobs
  succeeded, jobs failed, nodes settled), it has ended exactly when every
  node has settled, and it is in the ended index of its end state (by its
  end time) exactly when it has ended; a waiting node's job is pending,
  an enqueued node's job exists and has not finished; each job's link
  names its node's job in its workflow, unless retention removed the
  workflow.
  Allowed, because scripts drop them lazily on the way: an active job
  without a soft-timeout entry (take-soft-timeouts took it), and an
  available job missing from its ready set while its waiting deadline is
  indexed (a claim passed over it for its expiry; the expiry pass discards it).
  ARGV: 1 SCAN pattern matching every key of the deployment (keys.ts),
        2 key budget (most keys examined), 3 most problems reported.
  Returns: {sentence...}, empty when the data is consistent; the last ones
           say so when problems or keys went beyond their bound.
  Atomic: one script sees one snapshot. Bounded: the SCAN walks the whole
  keyspace of the node, examining at most `key budget` keys of the prefix.]]
argCount(3)
local pattern = argId(1)
local keyBudget = argInt(2, 1, MAX_COUNT)
local maxProblems = argInt(3, 1, MAX_COUNT)

local problems = {}
local omitted = 0
local function problem(sentence)
  if #problems < maxProblems then problems[#problems + 1] = sentence else omitted = omitted + 1 end
end

--[[ The keys: singletons by name, the others by prefix. ]]
local SINGLETONS = {
  [K.due] = 'zset', [K.expiries] = 'zset', [K.leases] = 'zset', [K.seq] = 'string', [K.queues] = 'zset',
  [K.workers] = 'zset', [K.timeouts] = 'zset', [K.workerIds] = 'zset', [K.paused] = 'set', [K.events] = 'stream',
  [K.eventPosition] = 'string', [K.limits] = 'hash', [K.schedules] = 'zset', [K.scheduleDue] = 'zset',
}
local FAMILIES = {
  { name = 'job', prefix = K.job, type = 'hash' }, { name = 'ready', prefix = K.ready, type = 'zset' },
  { name = 'counts', prefix = K.counts, type = 'hash' }, { name = 'worker', prefix = K.worker, type = 'hash' },
  { name = 'held', prefix = K.held, type = 'set' }, { name = 'listing', prefix = K.listing, type = 'zset' },
  { name = 'stats', prefix = K.stats, type = 'hash' }, { name = 'starts', prefix = K.starts, type = 'zset' },
  { name = 'unique', prefix = K.unique, type = 'string' }, { name = 'schedule', prefix = K.schedule, type = 'hash' },
  { name = 'rateLimitEvents', prefix = K.rateLimitEvents, type = 'hash' },
  { name = 'workflowPlan', prefix = K.workflowPlan, type = 'hash' }, { name = 'workflowEnded', prefix = K.workflowEnded, type = 'zset' },
  { name = 'workflow', prefix = K.workflow, type = 'hash' },
}
local found = {
  job = {}, ready = {}, counts = {}, worker = {}, held = {}, listing = {}, stats = {}, starts = {}, unique = {}, schedule = {},
  rateLimitEvents = {}, workflow = {}, workflowPlan = {}, workflowEnded = {},
}

local function checkType(key, expected)
  local actual = redis.call('TYPE', key).ok
  if actual ~= expected then problem('key ' .. key .. ' is a ' .. actual .. ', not a ' .. expected) end
  return actual == expected
end

local function classify(key)
  if SINGLETONS[key] then return checkType(key, SINGLETONS[key]) end
  for _, family in ipairs(FAMILIES) do
    if string.sub(key, 1, #family.prefix) == family.prefix then
      if checkType(key, family.type) then found[family.name][string.sub(key, #family.prefix + 1)] = true end
      return
    end
  end
  problem('key ' .. key .. ' belongs to no structure of the store')
end

local examined = 0
local seenKeys = {}
local cursor = '0'
repeat
  local reply = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
  cursor = reply[1]
  for _, key in ipairs(reply[2]) do
    if not seenKeys[key] then
      seenKeys[key] = true
      examined = examined + 1
      classify(key)
    end
  end
until cursor == '0' or examined >= keyBudget
if cursor ~= '0' then
  -- What was not read would look missing: the cross-checks below need every key.
  problems[#problems + 1] = 'the audit stopped after ' .. examined .. ' keys (its budget): the data was not checked'
  return problems
end

--[[ Reading helpers ]]

local function hashOf(key)
  local flat = redis.call('HGETALL', key)
  local hash = {}
  for i = 1, #flat, 2 do hash[flat[i]] = flat[i + 1] end
  return hash
end

-- A sorted set as member -> score.
local function scoresOf(key)
  local flat = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local scores = {}
  for i = 1, #flat, 2 do scores[flat[i]] = tonumber(flat[i + 1]) end
  return scores
end

local function setOf(members)
  local set = {}
  for _, member in ipairs(members) do set[member] = true end
  return set
end

local function expectScore(index, scores, id, expected, what)
  local score = scores[id]
  if score == nil then
    problem('job ' .. id .. ' is ' .. what .. ' but not in the ' .. index .. ' index')
  elseif score ~= tonumber(expected) then
    problem('job ' .. id .. ' is in the ' .. index .. ' index at ' .. int(score) .. ', not at ' .. tostring(expected))
  end
end

--[[ Jobs ]]

local jobs = {}
for id in pairs(found.job) do jobs[id] = hashOf(K.job .. id) end
local workers = {}
for id in pairs(found.worker) do workers[id] = hashOf(K.worker .. id) end
local held = {}
for id in pairs(found.held) do held[id] = setOf(redis.call('SMEMBERS', K.held .. id)) end
local ready = {}
for queue in pairs(found.ready) do ready[queue] = scoresOf(K.ready .. queue) end
-- Listing indexes by name (state, or state:queue), each as a set of its members.
local listings = {}
for name in pairs(found.listing) do
  local state, queue = string.match(name, '^([^:]+):?(.*)$')
  if not IS_JOB_STATE[state] or state == 'available' then
    problem('listing index ' .. K.listing .. name .. ' is not of a job state listed by time')
  elseif state == 'active' and queue ~= '' then
    problem('listing index ' .. K.listing .. name .. ' is of active jobs of one queue, which have none')
  else
    listings[name] = setOf(redis.call('ZRANGE', K.listing .. name, 0, -1))
  end
end
-- Listing entries a job accounts for, to find the others.
local listed = {}
local due, expiries, leases, timeouts = scoresOf(K.due), scoresOf(K.expiries), scoresOf(K.leases), scoresOf(K.timeouts)

local tally = {}
local REQUIRED = { 'body', 'queue', 'type', 'priority', 'vis', 'tmo', 'grace', 'stall', 'createdAt' }
for id, job in pairs(jobs) do
  local state, queue = job.state, job.queue
  for _, field in ipairs(REQUIRED) do
    if job[field] == nil then problem('job ' .. id .. ' has no ' .. field .. ' field') end
  end
  if not IS_JOB_STATE[state] then
    problem('job ' .. id .. ' is in no known state (' .. tostring(state) .. ')')
  elseif queue then
    tally[queue] = tally[queue] or {}
    tally[queue][state] = (tally[queue][state] or 0) + 1
    local deadline = WAITING[state] and waitingDeadline(job.discardAt, job.ttlAt, job.attempt)
    if state == 'available' then
      local score = ready[queue] and ready[queue][id]
      -- A claim drops a job past its waiting deadline from the ready set; the expiry pass,
      -- which finds it through the expiries index, then discards it.
      local isDropped = deadline and expiries[id] ~= nil
      if not score then
        if not isDropped then problem('job ' .. id .. ' is available but not in the ready set of its queue ' .. queue) end
      elseif math.floor(score / RUN_SEQUENCE_SPAN) ~= PRIORITY_MAX - tonumber(job.priority or 0) then
        problem('job ' .. id .. ' is in the ready set of ' .. queue .. ' with a score not of its priority ' .. tostring(job.priority))
      end
    end
    if state == 'scheduled' then expectScore('due', due, id, job.scheduledAt, state) end
    if state == 'retryable' then expectScore('due', due, id, job.nextRetryAt, state) end
    if deadline then expectScore('expiries', expiries, id, deadline, 'waiting with a deadline') end
    if state == 'active' then
      local worker = job.leaseWorker
      expectScore('leases', leases, id, job.leaseExpiresAt, 'active')
      if timeouts[id] and timeouts[id] ~= softTimeoutAt(job.startedAt, job.tmo, job.totalAt) then
        problem('job ' .. id .. ' is in the soft timeouts index at ' .. int(timeouts[id]) .. ', not at its soft timeout')
      end
      if not worker or not workers[worker] then
        problem('job ' .. id .. ' is active under a lease of ' .. tostring(worker) .. ', which is not a registered worker')
      elseif not (held[worker] and held[worker][id]) then
        problem('job ' .. id .. ' is active under a lease of ' .. worker .. ', whose held set does not list it')
      end
    end
    if job.createdAt and state ~= 'available' then
      local member = listingKey(listingTime(state, job.createdAt, job.startedAt, job.completedAt), id)
      for _, name in ipairs(state == 'active' and { state } or { state, state .. ':' .. queue }) do
        if listings[name] and listings[name][member] then
          listed[name .. ' ' .. member] = true
        else
          problem('job ' .. id .. ' is ' .. state .. ' but not in the listing index ' .. name .. ' under ' .. member)
        end
      end
    end
  end
end

--[[ Index entries without their job ]]

local function expectJobs(index, scores, accepts)
  for id in pairs(scores) do
    local job = jobs[id]
    if not job then
      problem(index .. ' index lists job ' .. id .. ', which does not exist')
    elseif not accepts(job) then
      problem(index .. ' index lists job ' .. id .. ', which is ' .. tostring(job.state))
    end
  end
end
expectJobs('the due', due, function(job) return job.state == 'scheduled' or job.state == 'retryable' end)
expectJobs('the expiries', expiries, function(job)
  return WAITING[job.state] and waitingDeadline(job.discardAt, job.ttlAt, job.attempt) ~= false
end)
expectJobs('the leases', leases, function(job) return job.state == 'active' end)
expectJobs('the soft timeouts', timeouts, function(job) return job.state == 'active' end)
for queue, scores in pairs(ready) do
  expectJobs('the ready set of ' .. queue .. "'s", scores, function(job) return job.state == 'available' and job.queue == queue end)
end

for name, members in pairs(listings) do
  for member in pairs(members) do
    if not listed[name .. ' ' .. member] then problem('listing index ' .. name .. ' lists ' .. member .. ', which is no job of it at that time') end
  end
end

--[[ Counters, pauses, throughput and the queue index ]]

for queue in pairs(found.counts) do
  local counts = hashOf(K.counts .. queue)
  local real = tally[queue] or {}
  for state, n in pairs(counts) do
    if not IS_JOB_STATE[state] then
      problem('the counts of queue ' .. queue .. ' have a field ' .. state .. ', which is no job state')
    elseif tonumber(n) ~= (real[state] or 0) then
      problem('the counts of queue ' .. queue .. ' say ' .. n .. ' ' .. state .. ' jobs, but it holds ' .. (real[state] or 0))
    end
  end
  for state, n in pairs(real) do
    if counts[state] == nil then problem('the counts of queue ' .. queue .. ' have no ' .. state .. ' field, but it holds ' .. n) end
  end
  if not tally[queue] then problem('queue ' .. queue .. ' holds no jobs but keeps its counts') end
end
local queueIndex = scoresOf(K.queues)
local paused = setOf(redis.call('SMEMBERS', K.paused))
for queue, score in pairs(queueIndex) do
  if not tally[queue] and not paused[queue] then problem('the queue index lists ' .. queue .. ', which holds no jobs and is not paused') end
  if score ~= 0 then problem('the queue index scores ' .. queue .. ' ' .. int(score) .. ', not 0') end
end
for queue in pairs(tally) do
  if not queueIndex[queue] then problem('queue ' .. queue .. ' holds jobs but is not in the queue index') end
  if not found.counts[queue] then problem('queue ' .. queue .. ' holds jobs but has no counts') end
end
for queue in pairs(paused) do
  if not queueIndex[queue] then problem('queue ' .. queue .. ' is paused but not in the queue index') end
end
-- Limits parse as set-queue-limits writes them; a start log belongs to a queue with a rate.
local limits = hashOf(K.limits)
for queue, text in pairs(limits) do
  local maxActive, rate, period = string.match(text, '^(%d*),(%d*),(%d*)$')
  if not maxActive or (rate == '') ~= (period == '') or (maxActive == '' and rate == '') then
    problem('the limits of queue ' .. queue .. ' are ' .. text)
  end
end
for queue in pairs(found.starts) do
  local rate = limits[queue] and string.match(limits[queue], '^%d*,(%d+),')
  if not rate then problem('queue ' .. queue .. ' keeps a start log but has no rate') end
end
--[[
  Rate-limit event sampling (claim.lua) belongs to a queue with limits and
  holds a quiet time and, during an episode, its strategy; it is kept while
  an episode is open (its released is still to come) and expires otherwise.
]]
for queue in pairs(found.rateLimitEvents) do
  local key = K.rateLimitEvents .. queue
  local fields = hashOf(key)
  local quiet, held = fields.quiet, fields.held
  fields.quiet, fields.held = nil, nil
  local ttl = redis.call('PTTL', key)
  if not limits[queue] then problem('queue ' .. queue .. ' keeps rate-limit event sampling but has no limits') end
  if not (quiet and string.match(quiet, '^%d+$')) or (held and held ~= 'rate' and held ~= 'concurrency') or next(fields) then
    problem('the rate-limit event sampling of queue ' .. queue .. ' is ' .. cjson.encode(hashOf(key)))
  end
  if held and ttl ~= -1 then problem('the rate-limit event sampling of queue ' .. queue .. ' expires during an episode') end
  if not held and ttl == -1 then problem('the rate-limit event sampling of queue ' .. queue .. ' never expires') end
end
--[[
  Uniqueness keys: each names a job that has this key and is in one of its
  policy's states (or active: claims leave keys alone, the job's next change
  releases it). A job in its counted states whose policy has no period (a key
  with a period may have expired) holds its key, or a later job does.
]]
for key in pairs(found.unique) do
  local id = redis.call('GET', K.unique .. key)
  local job = jobs[id]
  if not job then
    problem('uniqueness key ' .. key .. ' names job ' .. tostring(id) .. ', which does not exist')
  elseif job.uk ~= key then
    problem('uniqueness key ' .. key .. ' names job ' .. id .. ', whose key is ' .. tostring(job.uk))
  elseif job.state ~= 'active' and not countsIn(job.us or '', job.state) then
    problem('uniqueness key ' .. key .. ' is held by job ' .. id .. ' in ' .. tostring(job.state) .. ', which its policy does not count')
  end
end
for id, job in pairs(jobs) do
  if job.uk and not job.uu and job.state and countsIn(job.us or '', job.state) and not found.unique[job.uk] then
    problem('job ' .. id .. ' is ' .. job.state .. ' but its uniqueness key ' .. job.uk .. ' is missing')
  end
end
local STATS_FIELDS = { completed = true, failed = true, discarded = true }
for name in pairs(found.stats) do
  local minute = tonumber(string.match(name, ':(%d+)$'))
  if not minute or minute % MINUTE_MS ~= 0 then problem('throughput key ' .. K.stats .. name .. ' names no minute') end
  local ttl = redis.call('PTTL', K.stats .. name)
  if ttl < 0 or ttl > STATS_TTL_MS then problem('throughput key ' .. K.stats .. name .. ' does not expire within ' .. STATS_TTL_MS .. ' ms') end
  for field, n in pairs(hashOf(K.stats .. name)) do
    if not STATS_FIELDS[field] or not string.match(n, '^%d+$') then problem('throughput key ' .. K.stats .. name .. ' has ' .. field .. ' = ' .. n) end
  end
end

--[[ The event log ]]

do
  -- Approximate trimming removes whole stream nodes (up to 100 entries, or one larger than a node), and keeps
  -- the entry holding the oldest fact to keep: beyond them, facts of at most this many more.
  local EVENT_LOG_SLACK = 1000
  local oldestEntry = redis.call('XRANGE', K.events, '-', '+', 'COUNT', 1)[1]
  local newestEntry = redis.call('XREVRANGE', K.events, '+', '-', 'COUNT', 1)[1]
  local lastPosition = tonumber(redis.call('GET', K.eventPosition) or 0)
  if oldestEntry then
    local first, count = entrySpan(oldestEntry[1])
    local logged = lastPosition - first + 1
    if eventLogLength > 0 and logged - count > eventLogLength + trimStep() + EVENT_LOG_SLACK then
      problem('the event log holds ' .. int(logged) .. ' facts, beyond its length ' .. eventLogLength)
    end
    local newest, newestCount = entrySpan(newestEntry[1])
    if newest + newestCount - 1 > lastPosition then
      problem('the event log numbered facts up to ' .. int(lastPosition) .. ', but holds one at ' .. int(newest + newestCount - 1))
    end
  end
end

--[[ Schedules: each hash complete, listed by name, and in the due index exactly while it has a next tick (none while paused). ]]

do
  local names, due = scoresOf(K.schedules), scoresOf(K.scheduleDue)
  for name in pairs(found.schedule) do
    local schedule = hashOf(K.schedule .. name)
    for _, field in ipairs({ 'spec', 'expression', 'timezone', 'paused', 'createdAt', 'updatedAt', 'anchoredAt', 'revision', 'runCount' }) do
      if schedule[field] == nil then problem('schedule ' .. name .. ' has no ' .. field .. ' field') end
    end
    if names[name] ~= 0 then problem('schedule ' .. name .. ' is not in the schedule names at score 0') end
    local nextRunAt = tonumber(schedule.nextRunAt)
    if nextRunAt and schedule.paused ~= '0' then problem('schedule ' .. name .. ' is paused but has a next run') end
    if due[name] ~= nextRunAt then
      problem('schedule ' .. name .. ' is in the due index at ' .. tostring(due[name]) .. ', not at its next run ' .. tostring(nextRunAt))
    end
  end
  for name in pairs(names) do
    if not found.schedule[name] then problem('the schedule names list ' .. name .. ', which is not stored') end
  end
  for name in pairs(due) do
    if not found.schedule[name] then problem('the due schedules list ' .. name .. ', which is not stored') end
  end
end

--[[ Workflows ]]

do
  local ended = {}
  for state in pairs(found.workflowEnded) do
    if not TERMINAL_WORKFLOW[state] then problem('ended workflows are indexed under ' .. state .. ', which is no end state') end
    ended[state] = scoresOf(K.workflowEnded .. state)
  end
  for id in pairs(found.workflowPlan) do
    if not found.workflow[id] then problem('workflow ' .. id .. ' has a plan but no run') end
  end
  for id in pairs(found.workflow) do
    local run, plan = hashOf(K.workflow .. id), hashOf(K.workflowPlan .. id)
    local jobCount, nodeCount = tonumber(plan.jobCount), tonumber(plan.nodeCount)
    if not (jobCount and nodeCount) then
      problem('workflow ' .. id .. ' has a run but no plan')
    else
      local completed, failed, settled = 0, 0, 0
      for i = 0, nodeCount - 1 do
        local status = string.match(run['s' .. i] or '', '^(%a+),')
        if NODE_SETTLED[status] then settled = settled + 1 end
        if i < jobCount then
          if status == 'succeeded' then completed = completed + 1 end
          if status == 'failed' then failed = failed + 1 end
          local jobId = plan['j' .. i]
          local job = jobId and jobs[jobId]
          if status == 'waiting' and not (job and job.state == 'pending') then
            problem('workflow ' .. id .. ' node ' .. i .. ' waits, but its job ' .. tostring(jobId) .. ' is ' .. tostring(job and job.state))
          elseif status == 'enqueued' and not (job and not TERMINAL[job.state]) then
            problem('workflow ' .. id .. ' node ' .. i .. ' is enqueued, but its job ' .. tostring(jobId) .. ' is ' .. tostring(job and job.state))
          end
        end
      end
      for field, n in pairs({ completedCount = completed, failedCount = failed, settledCount = settled }) do
        if tonumber(run[field]) ~= n then problem('workflow ' .. id .. ' counts ' .. field .. ' ' .. tostring(run[field]) .. ', not ' .. n) end
      end
      if (TERMINAL_WORKFLOW[run.state] ~= nil) ~= (settled == nodeCount) then
        problem('workflow ' .. id .. ' is ' .. tostring(run.state) .. ' with ' .. settled .. ' of ' .. nodeCount .. ' nodes settled')
      end
    end
    for state, scores in pairs(ended) do
      local score = scores[id]
      if state == run.state and score ~= tonumber(run.completedAt) then
        problem('workflow ' .. id .. ' ended ' .. state .. ' at ' .. tostring(run.completedAt) .. ' but is indexed at ' .. tostring(score))
      elseif state ~= run.state and score then
        problem('workflow ' .. id .. ' is ' .. tostring(run.state) .. ' but indexed as ended ' .. state)
      end
    end
    if TERMINAL_WORKFLOW[run.state] and not ended[run.state] then problem('workflow ' .. id .. ' ended ' .. run.state .. ' but is not indexed') end
  end
  for state, scores in pairs(ended) do
    for id in pairs(scores) do
      if not found.workflow[id] then problem('the ended workflows (' .. state .. ') list ' .. id .. ', which is not stored') end
    end
  end
  for jobId, job in pairs(jobs) do
    if job.wf then
      local id, node = string.match(job.wf, '^(.+)|(%d+)$')
      local named = id and found.workflowPlan[id] and redis.call('HGET', K.workflowPlan .. id, 'j' .. node)
      if not id then
        problem('job ' .. jobId .. ' links to a workflow as ' .. job.wf)
      elseif found.workflowPlan[id] and named ~= jobId then
        problem('job ' .. jobId .. ' is node ' .. node .. ' of workflow ' .. id .. ', whose job there is ' .. tostring(named))
      end
    end
  end
end

--[[ Workers ]]

local byBeat, byId = scoresOf(K.workers), scoresOf(K.workerIds)
for id, worker in pairs(workers) do
  for _, field in ipairs({ 'registration', 'concurrency', 'lastBeatAt', 'registeredAt' }) do
    if worker[field] == nil then problem('worker ' .. id .. ' has no ' .. field .. ' field') end
  end
  for _, field in ipairs({ 'state', 'desired' }) do
    if not WORKER_STATES[worker[field] or ''] then problem('worker ' .. id .. ' has no known ' .. field .. ' (' .. tostring(worker[field]) .. ')') end
  end
  if byBeat[id] == nil then
    problem('worker ' .. id .. ' is not in the index of last beats')
  elseif byBeat[id] ~= tonumber(worker.lastBeatAt) then
    problem('worker ' .. id .. ' is in the index of last beats at ' .. int(byBeat[id]) .. ', not at its last beat')
  end
  if byId[id] == nil then problem('worker ' .. id .. ' is not in the index of worker ids') end
end
for id in pairs(byBeat) do
  if not workers[id] then problem('the index of last beats lists worker ' .. id .. ', which is not registered') end
end
for id, score in pairs(byId) do
  if not workers[id] then problem('the index of worker ids lists worker ' .. id .. ', which is not registered') end
  if score ~= 0 then problem('the index of worker ids scores ' .. id .. ' ' .. int(score) .. ', not 0') end
end
for workerId, ids in pairs(held) do
  local worker = workers[workerId]
  if not worker then problem('worker ' .. workerId .. ' is not registered but has a held set') end
  local n = 0
  for id in pairs(ids) do
    n = n + 1
    local job = jobs[id]
    if not job or job.state ~= 'active' or job.leaseWorker ~= workerId then
      problem('worker ' .. workerId .. ' holds job ' .. id .. ', which is not active under its lease (' .. tostring(job and job.state) .. ')')
    end
  end
  if worker and n > tonumber(worker.concurrency or 0) then
    problem('worker ' .. workerId .. ' holds ' .. n .. ' jobs, more than its concurrency ' .. tostring(worker.concurrency))
  end
end

if omitted > 0 then problems[#problems + 1] = 'and ' .. omitted .. ' more problems' end
return problems
