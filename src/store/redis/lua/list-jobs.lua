--[[
  list-jobs (read only): one page of the jobs a query selects (domain
  job-query.ts), in listing order. Oldest first: the available jobs in run
  order, from their queues' ready sets (queue by queue in name order, or
  the query's queue alone), then the jobs of the other states merged by
  listing key from the listing indexes (per state, or per state and queue
  when the query names a queue and the state has such indexes: all but
  active). Newest first: the exact reverse. Serves both listJobs (with the
  jobs) and findJobIds (ids only).
  Pre:  the listing indexes are exact (lib enter, relist): each job of a
        state listed by time is in its state's indexes under its listing
        key; the ready sets hold only available jobs, scored by run rank.
  Post: nothing changes. The time bounds of the states listed by that time
        (finished states by finished time; scheduled, pending and retryable
        by creation time) bound the index ranges; the other filters (type,
        error type, dead letter, creation time of finished, active and
        available jobs, the queue of active jobs, the schedule, the workflow) are checked on each job
        examined. States the filter cannot select (all but discarded with a
        dead-letter filter, unfinished ones with a finished-time bound) are
        not read. The page ends at `limit` jobs, at the scan budget (jobs
        examined, and queues passed without an available job to list), or
        (with the jobs) before the job that would take the stored size of
        the page beyond `max bytes` (a first job always fits).
  ARGV: 1 order (newest or oldest), 2 after (a listing key, exclusive: a
        job's listing time and id, or an available job's queue and run
        rank; '' for the first page), 3 limit, 4 scan budget, 5 with jobs
        (0/1), 6 max bytes, 7 queue, 8 type, 9 error type, 10 dead letter
        (0/1), 11 created after, 12 created before, 13 finished after,
        14 finished before, 15 schedule, 16 workflow ('' for each filter the
        query does not set), 17 state count, 18 stride (1), 19.. states.
  Returns: {{job id...}, {job hash...} (with the jobs; {} otherwise), next
           after (the listing key to continue after; '' when nothing follows)}.
  Bounded: examines at most the scan budget of entries and queues, and
  reads at most min(limit, budget) + 1 entries per index or ready set
  beyond them.
]]
local order = argMember(1, { newest = true, oldest = true })
local after = argOptional(2)
local limit = argInt(3, 1, MAX_PAGE_SIZE)
local budget = argInt(4, 1, MAX_COUNT)
local withJobs = argFlag(5)
local maxBytes = argCountOf(6)
local queue = argOptional(7)
local jobType = argOptional(8)
local errorType = argOptional(9)
local deadLetter
if argText(10) ~= '' then deadLetter = argFlag(10) end
local createdAfter, createdBefore = argOptionalTime(11), argOptionalTime(12)
local finishedAfter, finishedBefore = argOptionalTime(13), argOptionalTime(14)
local schedule = argOptional(15)
-- A job's workflow link ("<id>|<node>") starts with this.
local workflowLink = argOptional(16) and argOptional(16) .. '|'
local n, first = argBatch(17, 1)
if n < 1 or n > #JOB_STATES then refuse(17, 'is not a number of states from 1 to ' .. #JOB_STATES) end
local states = {}
for i = first, first + n - 1 do states[#states + 1] = argMember(i, IS_JOB_STATE) end

local isNewest = order == 'newest'
-- An available key names a position in the available jobs, which come before every listing key (oldest first).
local afterQueue, afterRank
if after then
  local name, rank = string.match(after, '^([a-z0-9][a-z0-9.%-]*)#(%d+)$')
  if name then afterQueue, afterRank = name, tonumber(rank) end
end
local timeAfter = not afterQueue and after or nil

local function pad(time)
  return string.format('%015.0f', time)
end

-- The states listed by time, each with its index's remaining range and the entries read ahead.
local sources = {}
local hasAvailable = false
local isCreationChecked = false
local isQueueChecked = false
for _, state in ipairs(states) do
  local byCreation = not TERMINAL[state] and state ~= 'available' and state ~= 'active'
  local isSelectable = (deadLetter == nil or state == 'discarded') and (TERMINAL[state] or (not finishedAfter and not finishedBefore))
  local low, high
  if TERMINAL[state] then
    low, high = finishedAfter, finishedBefore
  elseif byCreation then
    low, high = createdAfter, createdBefore
  end
  if (createdAfter or createdBefore) and not byCreation then isCreationChecked = isCreationChecked or isSelectable end
  if state == 'available' then
    hasAvailable = isSelectable
  elseif isSelectable and not (low and high and low > high) then
    local min = low and '[' .. pad(low) or '-'
    -- Keys of times up to `high` sort before its padded time followed by ';' (':' + 1).
    local max = high and '(' .. pad(high) .. ';' or '+'
    if timeAfter and isNewest and (max == '+' or timeAfter < string.sub(max, 2)) then max = '(' .. timeAfter end
    if timeAfter and not isNewest and (min == '-' or timeAfter >= string.sub(min, 2)) then min = '(' .. timeAfter end
    local isPerQueue = queue and state ~= 'active'
    if queue and not isPerQueue then isQueueChecked = true end
    local key = K.listing .. state .. (isPerQueue and ':' .. queue or '')
    sources[#sources + 1] = { key = key, min = min, max = max, entries = {}, at = 1, isDone = false, checksQueue = queue and not isPerQueue }
  end
end

local isFiltered = jobType ~= nil or schedule ~= nil or workflowLink ~= nil or errorType ~= nil or deadLetter ~= nil or isCreationChecked or isQueueChecked
local chunk = math.min(limit, isFiltered and budget or limit, MAX_PAGE_SIZE) + 1

--[[ The jobs of the states listed by time, merged by listing key. ]]

-- The next entry of a source in the page's order (nil when it has none left).
local function peekSource(source)
  if source.at > #source.entries and not source.isDone then
    local entries
    if isNewest then
      entries = redis.call('ZREVRANGEBYLEX', source.key, source.max, source.min, 'LIMIT', 0, chunk)
    else
      entries = redis.call('ZRANGEBYLEX', source.key, source.min, source.max, 'LIMIT', 0, chunk)
    end
    source.entries, source.at, source.isDone = entries, 1, #entries < chunk
    if #entries > 0 then
      if isNewest then source.max = '(' .. entries[#entries] else source.min = '(' .. entries[#entries] end
    end
  end
  return source.entries[source.at]
end

-- The next step of the merged listings: {key, id, checksQueue, take}, or nil.
local function nextListed()
  local best, bestKey
  for _, source in ipairs(sources) do
    local key = peekSource(source)
    if key and (not bestKey or (isNewest and key > bestKey) or (not isNewest and key < bestKey)) then best, bestKey = source, key end
  end
  if not best then return nil end
  return { key = bestKey, id = string.sub(bestKey, 17), checksQueue = best.checksQueue, take = function() best.at = best.at + 1 end }
end

--[[ The available jobs, queue by queue, each in run order (ready sets by score). ]]

local ready = { name = nil, start = nil, entries = {}, at = 1, isDone = true, hasListed = false, names = {}, nameAt = 1, isLastNames = false }

-- The next queue whose available jobs come after the position, in the page's order, or nil.
local function nextQueue()
  if queue then
    if ready.isLastNames then return nil end
    ready.isLastNames = true
    if afterQueue and afterQueue ~= queue and (isNewest and queue > afterQueue or not isNewest and queue < afterQueue) then return nil end
    return queue
  end
  if ready.nameAt > #ready.names then
    if ready.isLastNames then return nil end
    -- The position's own queue first (if it still is one), then those after it by name.
    local from = ready.name or afterQueue
    local bound = from and '(' .. from or (isNewest and '+' or '-')
    if not ready.name and afterQueue then bound = '[' .. afterQueue end
    if isNewest then
      ready.names = redis.call('ZREVRANGEBYLEX', K.queues, bound, '-', 'LIMIT', 0, chunk)
    else
      ready.names = redis.call('ZRANGEBYLEX', K.queues, bound, '+', 'LIMIT', 0, chunk)
    end
    ready.nameAt, ready.isLastNames = 1, #ready.names < chunk
    if #ready.names == 0 then return nil end
  end
  ready.nameAt = ready.nameAt + 1
  return ready.names[ready.nameAt - 1]
end

-- The next step of the available jobs: {key, id, take}, a queue passed without a job ({key, take}), or nil.
local function nextAvailable()
  while true do
    local entry = ready.entries[ready.at]
    if entry then return entry end
    if not ready.isDone then
      local set, bound = K.ready .. ready.name, '(' .. int(ready.start)
      local scored
      if isNewest then
        scored = redis.call('ZREVRANGEBYSCORE', set, bound, '-inf', 'WITHSCORES', 'LIMIT', 0, chunk)
      else
        scored = redis.call('ZRANGEBYSCORE', set, bound, '+inf', 'WITHSCORES', 'LIMIT', 0, chunk)
      end
      ready.entries, ready.at, ready.isDone = {}, 1, #scored < 2 * chunk
      for i = 1, #scored, 2 do
        local rank = tonumber(scored[i + 1])
        ready.entries[#ready.entries + 1] = { key = availableKey(ready.name, rank), id = scored[i], take = function() ready.at = ready.at + 1 end }
        ready.start = rank
      end
      if #scored > 0 then ready.hasListed = true end
    elseif ready.name and not ready.hasListed then
      -- A queue with nothing to list is a step of its own (keyed past the whole queue): the budget bounds the queues passed.
      ready.hasListed = true
      return { key = availableKey(ready.name, isNewest and 0 or RUN_RANK_END), take = function() end }
    else
      local name = nextQueue()
      if not name then return nil end
      ready.name, ready.isDone, ready.hasListed, ready.entries, ready.at = name, false, false, {}, 1
      ready.start = name == afterQueue and afterRank or (isNewest and RUN_RANK_END or 0)
    end
  end
end

--[[ The page ]]

local phases
if isNewest then
  phases = { not afterQueue and nextListed or nil, hasAvailable and nextAvailable or nil }
else
  phases = { hasAvailable and (not after or afterQueue) and nextAvailable or nil, nextListed }
end
local phase = 1
local function nextStep()
  while phase <= 2 do
    local step = phases[phase] and phases[phase]()
    if step then return step end
    phase = phase + 1
  end
  return nil
end

-- Whether the job passes the filters the indexes did not answer (mirror of domain job-query.ts
-- matchesFilter). Reads the few fields they need, never the job itself: most may not match.
local function matches(id, checksQueue)
  local f = redis.call('HMGET', K.job .. id, 'state', 'type', 'errorType', 'deadLetter', 'createdAt', 'queue', 'cron', 'wf')
  local job = { state = f[1], type = f[2], errorType = f[3], deadLetter = f[4], createdAt = f[5], queue = f[6], cron = f[7], wf = f[8] }
  if checksQueue and job.queue ~= queue then return false end
  if jobType and job.type ~= jobType then return false end
  if schedule and job.cron ~= schedule then return false end
  if workflowLink and not (job.wf and string.sub(job.wf, 1, #workflowLink) == workflowLink) then return false end
  -- A completed job shows no error (job-codec.ts decodeJob).
  if errorType and (job.state == 'completed' or job.errorType ~= errorType) then return false end
  if deadLetter ~= nil and (job.state ~= 'discarded' or (job.deadLetter == '1') ~= deadLetter) then return false end
  local createdAt = tonumber(job.createdAt)
  if createdAfter and createdAt < createdAfter then return false end
  if createdBefore and createdAt > createdBefore then return false end
  return true
end

-- The stored size of a job (its hash's values): roughly its JSON bytes.
local function sizeOf(hash)
  local size = 0
  for i = 2, #hash, 2 do size = size + #hash[i] end
  return size
end

local ids, hashes = {}, {}
local bytes, examined = 0, 0
local last
local nextAfter = ''
while true do
  local step = nextStep()
  if not step then break end
  if #ids >= limit or examined >= budget then
    nextAfter = last
    break
  end
  local isMatch = step.id and (not isFiltered or matches(step.id, step.checksQueue))
  local hash = isMatch and withJobs and redis.call('HGETALL', K.job .. step.id) or nil
  if hash then
    local size = sizeOf(hash)
    if #ids > 0 and bytes + size > maxBytes then
      nextAfter = last
      break
    end
    bytes = bytes + size
  end
  step.take()
  examined = examined + 1
  last = step.key
  if isMatch then
    ids[#ids + 1] = step.id
    if withJobs then hashes[#hashes + 1] = hash end
  end
end
return { ids, hashes, nextAfter }
