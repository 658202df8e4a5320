--[[
  list-jobs (read only): one page of the jobs a query selects (domain
  job-query.ts), in listing order, from the listing indexes: per state, or
  per state and queue when the query names a queue. Serves both listJobs
  (with the jobs) and findJobIds (ids only).
  Pre:  the listing indexes are exact (lib enter, relist): each job is in
        the index of its state under its listing key.
  Post: nothing changes. The states' indexes are merged by listing key,
        newest or oldest first, after the cursor. The time bounds of the
        states listed by that time (finished states by finished time; states
        other than available and the finished ones by creation time) bound
        the index ranges; the other filters (type, error type, dead letter,
        creation time of finished and available jobs) are checked on each job
        examined, at most `scan budget` of them (`limit` when there is no
        such filter). States the filter cannot select (all but discarded with
        a dead-letter filter, unfinished ones with a finished-time bound) are
        not read. The page ends at `limit` jobs, at the scan budget, or (with
        the jobs) before the job that would take the stored size of the page
        beyond `max bytes` (a first job always fits).
  ARGV: 1 order (newest or oldest), 2 after (a listing key, exclusive; ''
        for the first page), 3 limit, 4 scan budget, 5 with jobs (0/1),
        6 max bytes, 7 queue, 8 type, 9 error type, 10 dead letter (0/1),
        11 created after, 12 created before, 13 finished after, 14 finished
        before ('' for each filter the query does not set), 15 state count,
        16 stride (1), 17.. states.
  Returns: {{job id...}, {job hash...} (with the jobs; {} otherwise), next
           after (the listing key to continue after; '' when nothing follows)}.
  Bounded: examines at most the scan budget of entries, and reads at most
  min(limit, budget) + 1 entries per state beyond them.
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
local n, first = argBatch(15, 1)
if n < 1 or n > #JOB_STATES then refuse(15, 'is not a number of states from 1 to ' .. #JOB_STATES) end
local states = {}
for i = first, first + n - 1 do states[#states + 1] = argMember(i, IS_JOB_STATE) end

local isNewest = order == 'newest'
local isCreationChecked = false

local function pad(time)
  return string.format('%015.0f', time)
end

-- One state's index: its remaining range and the entries read ahead.
local sources = {}
for _, state in ipairs(states) do
  local byCreation = not TERMINAL[state] and state ~= 'available'
  local isSelectable = (deadLetter == nil or state == 'discarded') and (TERMINAL[state] or (not finishedAfter and not finishedBefore))
  local low, high
  if TERMINAL[state] then
    low, high = finishedAfter, finishedBefore
  elseif byCreation then
    low, high = createdAfter, createdBefore
  end
  if isSelectable and not (low and high and low > high) then
    local min = low and '[' .. pad(low) or '-'
    -- Keys of times up to `high` sort before its padded time followed by ';' (':' + 1).
    local max = high and '(' .. pad(high) .. ';' or '+'
    if after and isNewest and (max == '+' or after < string.sub(max, 2)) then max = '(' .. after end
    if after and not isNewest and (min == '-' or after >= string.sub(min, 2)) then min = '(' .. after end
    if (createdAfter or createdBefore) and not byCreation then isCreationChecked = true end
    local key = K.listing .. state .. (queue and ':' .. queue or '')
    sources[#sources + 1] = { key = key, min = min, max = max, entries = {}, at = 1, isDone = false }
  end
end

local isFiltered = jobType ~= nil or errorType ~= nil or deadLetter ~= nil or isCreationChecked
if not isFiltered then budget = limit end
local chunk = math.min(limit, budget, MAX_PAGE_SIZE) + 1

-- The next entry of a source in the page's order (nil when it has none left).
local function peek(source)
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

-- The source whose next entry comes first.
local function nextSource()
  local best, bestKey
  for _, source in ipairs(sources) do
    local key = peek(source)
    if key and (not bestKey or (isNewest and key > bestKey) or (not isNewest and key < bestKey)) then best, bestKey = source, key end
  end
  return best, bestKey
end

-- Whether the job passes the filters the index did not answer (mirror of domain job-query.ts
-- matchesFilter). Reads the few fields they need, never the job itself: most may not match.
local function matches(id)
  local f = redis.call('HMGET', K.job .. id, 'state', 'type', 'errorType', 'deadLetter', 'createdAt')
  local job = { state = f[1], type = f[2], errorType = f[3], deadLetter = f[4], createdAt = f[5] }
  if jobType and job.type ~= jobType then return false end
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
  local source, key = nextSource()
  if not source then break end
  if #ids >= limit or examined >= budget then
    nextAfter = last
    break
  end
  local id = string.sub(key, 17)
  local isMatch = not isFiltered or matches(id)
  local hash = isMatch and withJobs and redis.call('HGETALL', K.job .. id) or nil
  if hash then
    local size = sizeOf(hash)
    if #ids > 0 and bytes + size > maxBytes then
      nextAfter = last
      break
    end
    bytes = bytes + size
  end
  source.at = source.at + 1
  examined = examined + 1
  last = key
  if isMatch then
    ids[#ids + 1] = id
    if withJobs then hashes[#hashes + 1] = hash end
  end
end
return { ids, hashes, nextAfter }
