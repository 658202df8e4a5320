--[[
  Shared helpers of every script of this directory, in the one function
  library they are loaded in (function-library.ts), after the generated
  lib/domain.lua and lib/arguments.lua (scripts.ts LUA_LIBRARIES), before
  lib/job-changes.lua and lib/workers.lua, which build on them. Nothing
  here runs on its own: each helper is one step that several scripts take
  (a job entering a state, a lease released, a fact recorded, a signal
  published). The domain's tables (states, transitions, bounds) come from
  domain.lua; the lease, deadline and listing arithmetic below mirrors
  src/domain/timeouts.ts, lease.ts and job-query.ts, and
  test/contract/lua-domain.test.ts proves the two agree.

  Keys (identical for every script, built in keys.ts, arriving as the key
  list of the settings: lib/arguments.lua; K names them):
    1 job prefix      2 ready prefix     3 due zset        4 expiries zset
    5 leases zset     6 seq counter      7 queue names zset (score 0: by name)
    8 counts prefix   9 workers zset (by last beat)       10 worker prefix
   11 held prefix    12 listing prefix (zsets by listing key, per state listed
                        by time, and per such state but active and queue)
   13 signal channel 14 soft timeouts zset                 15 worker ids zset
                        (score 0: by id)                   16 paused queues set
   17 stats prefix (per queue and minute)                  18 event log stream
   19 heartbeat channel                  20 the event log's last position
   21 queue limits hash                  22 start log prefix (per queue with a rate)
   23 uniqueness key prefix (per key, the id of the job holding it)
   24 schedule prefix (per name, its hash)                 25 schedule names zset (score 0: by name)
   26 due schedules zset (by next tick)
   27 rate-limit event sampling prefix (per queue with limits whose jobs were held back)
   28 workflow run prefix (per workflow, its progress)     29 workflow plan prefix (per workflow, its plan)
   30 ended workflows prefix (per end state, its workflows by end time)
  Times are epoch milliseconds and always arrive in ARGV: scripts never read
  the Redis clock, so they behave the same under a test clock.

  Writes to shared indexes (sorted sets, sets, counters, throughput stats)
  and the facts of the event log are gathered while a script runs and
  issued once per key by flush(), which every writing script calls before
  it returns: a script that changes 200 jobs of one queue makes one ZADD
  and one HINCRBY per state, not 200 of each. A member's last pending
  change wins, whatever came before it. No script reads an index it has
  pending writes for before flushing.
]]
local KEY_NAMES = {
  'job', 'ready', 'due', 'expiries', 'leases', 'seq', 'queues', 'counts', 'workers', 'worker',
  'held', 'listing', 'channel', 'timeouts', 'workerIds', 'paused', 'stats', 'events', 'heartbeats', 'eventPosition',
  'limits', 'starts', 'unique', 'schedule', 'schedules', 'scheduleDue', 'rateLimitEvents', 'workflow', 'workflowPlan', 'workflowEnded',
}
-- The call's keys by name (K.job is the key list's first), set by begin: replicas of several deployments (prefixes) share one Redis.
local K = {}
-- Between the keys of the key list (keys.ts KEY_LIST_SEPARATOR).
local KEY_LIST_SEPARATOR = '\31'
--[[
  The key list K was last built from. A deployment sends the same list with
  every call, so K is built once, not per call; a call of another
  deployment (another prefix) builds it again. The list is counted before
  K changes: a bad one is refused, and leaves K as it was.
]]
local keyListOfK

--[[
  Hot paths format the same few values again and again (a script's `now`,
  a batch's creation time): these memos make each text once per script run.
  Values read from hashes are already text.
]]
local texts, padded, numbers

resets[#resets + 1] = function(keyList)
  if keyList ~= keyListOfK then
    local keys = {}
    for key in string.gmatch(keyList, '[^' .. KEY_LIST_SEPARATOR .. ']+') do keys[#keys + 1] = key end
    if #keys ~= #KEY_NAMES or #keyList ~= #table.concat(keys, KEY_LIST_SEPARATOR) then
      error({ err = 'BADARG settings: the key list does not hold ' .. #KEY_NAMES .. ' keys' })
    end
    for i = 1, #KEY_NAMES do K[KEY_NAMES[i]] = keys[i] end
    keyListOfK = keyList
  end
  texts, padded, numbers = {}, {}, {}
end

-- A whole number as text (numbers of a script run are few: memoized).
local function text(n)
  if type(n) == 'string' then return n end
  local found = texts[n]
  if not found then
    found = int(n)
    texts[n] = found
  end
  return found
end

--[[
  A number from a hash field's text (or a number), memoized: a batch's jobs
  mostly share their timeouts, and tonumber parses with strtod, several
  hundred instructions a field.
]]
local function num(value)
  local found = numbers[value]
  if found == nil then
    found = tonumber(value)
    numbers[value] = found
  end
  return found
end

-- A time zero-padded to 15 digits, so that texts sort as the times do (job-query.ts listingKey).
local function pad(time)
  local found = padded[time]
  if not found then
    found = string.format('%015d', tonumber(time))
    padded[time] = found
  end
  return found
end

--[[ Pending writes ]]

-- Pending writes, keyed by the Redis key they go to: for sorted sets and
-- sets, member -> score or true (added) or false (removed); for counters,
-- queue -> state -> delta; for stats, key -> field -> delta.
local pending
-- Per state, its listing index's pending members and, per queue, those of the queue's
-- (relist): memos of `pending`, emptied with it.
local listings
-- Per minute start and queue, its pending stats deltas (stat): memos of `pending`, emptied with it.
local statsDeltas
-- The facts to append to the event log, in order: one stream entry at flush.
local facts
-- Queues that lost a job for good (pruned, deleted): dropped once they hold none.
local shrunk
-- The signals to publish at finish: per queue, its jobs made available; per worker, its capacity freed;
-- per worker, the ids of its jobs that were cancelled; then any other signal, in order.
local available, freed, cancelledJobs, signals
-- The heartbeat notices to publish at finish, in order (publishHeartbeat).
local heartbeatNotices
-- The earliest time of the due entries this call added (flush), to announce at finish if no entry comes sooner.
local earliestDueAdded

resets[#resets + 1] = function()
  pending, listings, statsDeltas, facts, shrunk = { zset = {}, set = {}, hincr = {}, stats = {} }, {}, {}, {}, {}
  available, freed, cancelledJobs, signals = {}, {}, {}, {}
  heartbeatNotices = {}
  earliestDueAdded = nil
end

local function membersOf(group, key)
  local members = pending[group][key]
  if not members then
    members = {}
    pending[group][key] = members
  end
  return members
end

local function zadd(key, score, member)
  membersOf('zset', key)[member] = score
end
local function zrem(key, member)
  membersOf('zset', key)[member] = false
end
local function sadd(key, member)
  membersOf('set', key)[member] = true
end
local function srem(key, member)
  membersOf('set', key)[member] = false
end

-- Moves `n` (default 1) jobs' state counter of their queue from `from` to `to`
-- (nil for jobs that appear or disappear).
local function count(queue, from, to, n)
  n = n or 1
  local deltas = pending.hincr[queue]
  if not deltas then
    deltas = {}
    pending.hincr[queue] = deltas
  end
  if from then deltas[from] = (deltas[from] or 0) - n end
  if to then deltas[to] = (deltas[to] or 0) + n end
  if not to then shrunk[queue] = true end
end

-- A queue's throughput minutes last twice as long as the stats read them.
local STATS_TTL_MS = 2 * THROUGHPUT_MINUTES * MINUTE_MS

-- The stats key of a queue's minute holding `at`.
local function statsKey(queue, at)
  return K.stats .. queue .. ':' .. int(at - at % MINUTE_MS)
end

-- Counts `n` (default 1) completed, failed or discarded jobs of the queue in the minute holding `at`.
local function stat(queue, at, field, n)
  local minute = at - at % MINUTE_MS
  local byQueue = statsDeltas[minute]
  if not byQueue then
    byQueue = {}
    statsDeltas[minute] = byQueue
  end
  local deltas = byQueue[queue]
  if not deltas then
    deltas = membersOf('stats', statsKey(queue, minute))
    byQueue[queue] = deltas
  end
  deltas[field] = (deltas[field] or 0) + (n or 1)
end

-- A queue that is not paused and whose every count is zero holds no job and
-- needs no listing: its counts and its entry in the queue index go, so queues
-- nobody uses any more cost nothing.
local function dropIfEmpty(queue)
  local counts = redis.call('HVALS', K.counts .. queue)
  for _, n in ipairs(counts) do
    if tonumber(n) ~= 0 then return end
  end
  redis.call('DEL', K.counts .. queue)
  if redis.call('SISMEMBER', K.paused, queue) == 0 then redis.call('ZREM', K.queues, queue) end
end

--[[
  The event log (fact-codec.ts): one stream entry per script call, id
  "<position of its first fact>-<number of facts>", one field `f` holding
  the facts' lines separated by RS. Positions count facts one by one
  (domain event-facts.ts), from the counter at K.eventPosition: cursors
  order facts exactly, and trimming by count is trimming by position.
]]
local FIELD_SEPARATOR, FACT_SEPARATOR = '\31', '\30'

-- The log is trimmed when its last position passes a multiple of this
-- (a hundredth of its length, at most 1,000 facts): the search for where
-- to cut is paid once per that many facts, and the log holds at most that
-- many facts beyond its length, plus a stream node.
local function trimStep()
  return math.max(1, math.min(1000, math.floor(eventLogLength / 100)))
end

-- The position and fact count an entry id names ("<first>-<count>").
local function entrySpan(id)
  local first, count = string.match(id, '^(%d+)%-(%d+)$')
  return tonumber(first), tonumber(count)
end

--[[
  The position counter was missing (a new log, or its key was lost): the
  call's facts start at firstLogPosition of the first one's time (domain
  event-facts.ts), and after whatever the stream still holds, so positions
  never go back. Returns the position of the call's last fact, stored.
]]
local function restartPositions(n)
  local at = tonumber(string.match(facts[1], '^%a' .. FIELD_SEPARATOR .. '(%d+)'))
  local first = math.min(at, LOG_START_MAX_MS) * LOG_POSITIONS_PER_MS + 1
  local newest = redis.call('XREVRANGE', K.events, '+', '-', 'COUNT', 1)[1]
  if newest then
    local position, count = entrySpan(newest[1])
    first = math.max(first, position + count)
  end
  redis.call('SET', K.eventPosition, int(first + n - 1))
  return first + n - 1
end

--[[
  Where to cut the log so that it keeps its newest `eventLogLength` facts
  once the entry [first, last] is added: the id of the entry holding the
  oldest fact to keep (entries before it go, in whole stream nodes), or nil
  when it is not time to trim (see trimStep) or nothing is old enough.
]]
local function trimmedBefore(first, last, n)
  local step = trimStep()
  if math.floor(last / step) == math.floor((first - 1) / step) then return nil end
  local keep = last - eventLogLength + 1
  if keep >= first then return int(first) .. '-' .. n end
  local holder = redis.call('XREVRANGE', K.events, '(' .. int(keep + 1) .. '-0', '-', 'COUNT', 1)[1]
  return holder and holder[1]
end

-- Appends the pending facts to the event log as one entry, trimming it to about its length.
local function appendFacts()
  local n = #facts
  if n == 0 then return end
  local last = redis.call('INCRBY', K.eventPosition, n)
  if last == n then last = restartPositions(n) end
  local first = last - n + 1
  local id = int(first) .. '-' .. n
  local entry = n == 1 and facts[1] or table.concat(facts, FACT_SEPARATOR)
  local cut = trimmedBefore(first, last, n)
  if cut then
    redis.call('XADD', K.events, 'MINID', '~', cut, id, 'f', entry)
  else
    redis.call('XADD', K.events, id, 'f', entry)
  end
  facts = {}
end

-- Runs `command` on `key` with `values`, in chunks (none when there are no values):
-- unpack stays far below Lua's limit of about 8,000 values. A chunk ends on an even
-- count, so that score, member pairs never split.
local function callChunked(command, key, values)
  for i = 1, #values, 4000 do
    redis.call(command, key, unpack(values, i, math.min(i + 4000 - 1, #values)))
  end
end

-- Issues every pending write, in chunks.
local function flush()
  local chunked = callChunked
  for _, score in pairs(pending.zset[K.due] or {}) do
    local at = score and tonumber(score)
    if at and (not earliestDueAdded or at < earliestDueAdded) then earliestDueAdded = at end
  end
  for key, members in pairs(pending.zset) do
    local adds, removes = {}, {}
    for member, score in pairs(members) do
      if score then
        -- Scores are integers: as text here, or Redis would format each number with '%.17g', a slow path.
        adds[#adds + 1] = type(score) == 'number' and int(score) or score
        adds[#adds + 1] = member
      else
        removes[#removes + 1] = member
      end
    end
    if #adds > 0 then chunked('ZADD', key, adds) end
    if #removes > 0 then chunked('ZREM', key, removes) end
  end
  for key, members in pairs(pending.set) do
    local adds, removes = {}, {}
    for member, isAdded in pairs(members) do
      if isAdded then adds[#adds + 1] = member else removes[#removes + 1] = member end
    end
    if #adds > 0 then chunked('SADD', key, adds) end
    if #removes > 0 then chunked('SREM', key, removes) end
  end
  for queue, deltas in pairs(pending.hincr) do
    for state, delta in pairs(deltas) do
      if delta ~= 0 then redis.call('HINCRBY', K.counts .. queue, state, delta) end
    end
  end
  for key, deltas in pairs(pending.stats) do
    for field, delta in pairs(deltas) do redis.call('HINCRBY', key, field, delta) end
    redis.call('PEXPIRE', key, STATS_TTL_MS)
  end
  for queue in pairs(shrunk) do dropIfEmpty(queue) end
  appendFacts()
  pending = { zset = {}, set = {}, hincr = {}, stats = {} }
  statsDeltas = {}
  listings = {}
  shrunk = {}
end

--[[
  Flushes, then publishes the signals gathered since the last call. A due
  entry this call added that no other precedes is announced (k = 'u', a =
  its time): replicas plan their next promotion pass by the earliest due
  entry, so one sooner than that must be told (JobStore.promoteDue).
]]
local function finish()
  flush()
  if earliestDueAdded then
    local first = redis.call('ZRANGE', K.due, 0, 0, 'WITHSCORES')[2]
    if first and tonumber(first) >= earliestDueAdded then
      redis.call('PUBLISH', K.channel, cjson.encode({ k = 'u', a = int(earliestDueAdded) }))
    end
    earliestDueAdded = nil
  end
  for queue, n in pairs(available) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'a', q = queue, n = n }))
  end
  for worker, n in pairs(freed) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'c', w = worker, n = n }))
  end
  for worker, ids in pairs(cancelledJobs) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'x', w = worker, j = ids }))
  end
  for _, message in ipairs(signals) do
    redis.call('PUBLISH', K.channel, cjson.encode(message))
  end
  -- One message for a call's notices (a list when there are several): a recordBeats call carries tens of beats.
  if #heartbeatNotices == 1 then
    redis.call('PUBLISH', K.heartbeats, cjson.encode(heartbeatNotices[1]))
  elseif #heartbeatNotices > 1 then
    redis.call('PUBLISH', K.heartbeats, cjson.encode(heartbeatNotices))
  end
  available, freed, cancelledJobs, signals = {}, {}, {}, {}
  heartbeatNotices = {}
end

--[[ Facts (the event log) ]]

-- Appends a fact to the log at flush, unless the log is off.
local function record(f)
  if eventLogLength > 0 then facts[#facts + 1] = f end
end

-- Whether facts are recorded: scripts that return no transition build none otherwise.
local function isLogging()
  return eventLogLength > 0
end

local NO_EXTRA = {}

--[[
  Settles the workflow node of a job that entered a terminal state, in the
  same script (lib/workflows.lua sets it; transition() calls it, after the
  job's own fact, on every path that finishes a job).
]]
local workflowSettled

--[[
  The line of a job fact (fact-codec.ts JOB_FIELDS, in order), from its
  fields as text ('' or nil for none): the one place that lays it out.
  Positional, so that hot paths build their facts without a table each.
  One concatenation builds the line.
]]
local function jobFactLine(now, id, type, queue, from, to, attempt, workerId, priority, scheduledAt, nextRetryAt, maxAttempts, startedAt,
                           enqueuedAt, createdAt, error, deadLetter, reason, actor, tp)
  return 'j' .. FIELD_SEPARATOR .. now .. FIELD_SEPARATOR .. id .. FIELD_SEPARATOR .. type .. FIELD_SEPARATOR .. queue
    .. FIELD_SEPARATOR .. from .. FIELD_SEPARATOR .. to .. FIELD_SEPARATOR .. attempt .. FIELD_SEPARATOR .. (workerId or '')
    .. FIELD_SEPARATOR .. (priority or '') .. FIELD_SEPARATOR .. (scheduledAt or '') .. FIELD_SEPARATOR .. (nextRetryAt or '')
    .. FIELD_SEPARATOR .. (maxAttempts or '') .. FIELD_SEPARATOR .. (startedAt or '') .. FIELD_SEPARATOR .. (enqueuedAt or '')
    .. FIELD_SEPARATOR .. (createdAt or '') .. FIELD_SEPARATOR .. (error or '') .. FIELD_SEPARATOR .. (deadLetter or '')
    .. FIELD_SEPARATOR .. (reason or '') .. FIELD_SEPARATOR .. (actor or '') .. FIELD_SEPARATOR .. (tp or '')
end

--[[
  Job `id` moved from `from` ('none' for a new job) to `to` at `now`:
  records the fact, counts the queue's throughput (completed; a failed
  attempt, which leaves active with an error; discarded), and returns the
  fact's line (jobFactLine), which is also the transition scripts return:
  what the log tells and what the caller is told never disagree. `job`
  holds type, queue, attempt and, when known, startedAt (reported for an
  attempt that starts or ends), enqueuedAt (for one that starts) and tp
  (its traceparent, stored as fact text); `extra` the change's own fields:
  workerId, priority, scheduledAt, nextRetryAt, maxAttempts, createdAt,
  error (summary JSON), deadLetter ('0'/'1'), reason, actor. Every value
  is text (or a number below 10^14, which concatenates exactly). A job of
  a workflow (job.wf: its link, false when the caller read none, nil when
  it did not read it) that finishes advances its workflow here.
]]
local function transition(id, job, from, to, now, extra)
  extra = extra or NO_EXTRA
  local isAttempt = to == 'active' or from == 'active'
  local f = jobFactLine(text(now), id, job.type, job.queue, from, to, text(job.attempt or 0), extra.workerId, extra.priority,
    extra.scheduledAt, extra.nextRetryAt, extra.maxAttempts, isAttempt and job.startedAt, to == 'active' and job.enqueuedAt,
    extra.createdAt, extra.error, extra.deadLetter, extra.reason, extra.actor, job.tp)
  if to == 'completed' then stat(job.queue, now, 'completed') end
  if from == 'active' and extra.error and to ~= 'cancelled' then stat(job.queue, now, 'failed') end
  if to == 'discarded' then stat(job.queue, now, 'discarded') end
  record(f)
  if TERMINAL[to] and workflowSettled then workflowSettled(id, job, to, now) end
  return f
end

-- A fact line from its fields, in order (nil and false: absent).
local function factLine(kind, fields, n)
  local line = { kind }
  for i = 1, n do
    local value = fields[i]
    line[i + 1] = (value == nil or value == false) and '' or text(value)
  end
  return table.concat(line, FIELD_SEPARATOR)
end

-- A worker reported progress (`progress` nil when the report had none) on its held job.
local function progressFact(id, job, workerId, progress, now)
  local shown = progress and string.format('%.17g', progress)
  record(factLine('p', { now, id, job.type, job.queue, workerId, job.attempt or 0, shown, job.tp }, 8))
end

--[[
  A worker registered, changed state or left. `details` holds, as the change
  has them: queues (JSON list), concurrency, activeJobs, reason
  (deregistered or dead), registeredAt, lastBeatAt.
]]
local function workerFact(workerId, from, to, now, details)
  local d = details
  record(factLine('w', { now, workerId, from, to, d.queues, d.concurrency, d.activeJobs, d.reason, d.registeredAt, d.lastBeatAt }, 10))
end

-- A queue was paused or resumed (`actor` stored as fact text).
local function queueFact(queue, paused, actor, now)
  record(factLine('q', { now, queue, paused and '1' or '0', actor }, 4))
end

-- A queue's limits held its jobs back ('exceeded': with the limit and where it
-- stood) or let them start again ('released': with the first job then started, if any).
local function rateLimitFact(queue, change, strategy, now, limit, current, jobId)
  record(factLine('r', { now, queue, change, strategy, limit, current, jobId }, 7))
end

--[[
  A live heartbeat notice (signal-codec.ts decodeHeartbeats), published at
  finish: a worker beat (its state) or extended a lease, renewing `leases`,
  each {job id, type, queue, attempt, when its lease now lapses}. Numbers
  are strings: cjson would round them; `at` is the call's time as its
  argument came (checked), so that none is formatted again.
]]
local function publishHeartbeat(workerId, at, state, leases)
  local notice = { w = workerId, a = at, s = state }
  if #leases > 0 then notice.j = leases end
  heartbeatNotices[#heartbeatNotices + 1] = notice
end

-- A renewed lease as a heartbeat notice lists it; `job` holds type, queue and attempt.
local function renewedLease(id, job, expiresAt)
  return { id, job.type, job.queue, int(tonumber(job.attempt)), int(expiresAt) }
end

--[[ Domain arithmetic (mirrors of src/domain) ]]

-- Store-wide FIFO sequence, reserved in blocks so a batch costs one INCRBY.
local seqNext, seqLast

resets[#resets + 1] = function()
  seqNext, seqLast = 0, -1
end

local function nextSeq()
  if seqNext > seqLast then
    seqLast = redis.call('INCRBY', K.seq, 1024)
    seqNext = seqLast - 1023
  end
  seqNext = seqNext + 1
  return seqNext - 1
end

-- Ready queues order by this score, the job's run rank (domain job-query.ts
-- runRank): higher priority first, then FIFO. The priority part is a
-- multiple of RUN_SEQUENCE_SPAN and sequences stay below it, so over the
-- domain's priority range every score is exact in a double.
local function readyScoreOf(priority, seq)
  return (PRIORITY_MAX - tonumber(priority)) * RUN_SEQUENCE_SPAN + seq
end
local function readyScore(priority)
  return readyScoreOf(priority, nextSeq())
end

--[[
  The earliest deadline of an active job's lease (mirror of domain/timeouts.ts
  leaseExpiry): visibility (at most the confirmation window until confirmed),
  stall, execution timeout plus grace period, total timeout. Its first six
  arguments are the job's hash fields vis, stall, tmo, grace, totalAt (nil
  for none) and startedAt, as text or numbers.
]]
local function leaseExpiry(vis, stall, tmo, grace, totalAt, startedAt, renewedAt, confirmWithin)
  local visibility = num(vis)
  if confirmWithin and confirmWithin < visibility then visibility = confirmWithin end
  local at = math.min(renewedAt + visibility, renewedAt + num(stall), num(startedAt) + num(tmo) + num(grace))
  if totalAt then at = math.min(at, num(totalAt)) end
  return at
end

-- When the worker is told to stop an attempt (mirror of domain/timeouts.ts
-- softTimeoutAt): its execution timeout, or its total timeout if earlier.
local function softTimeoutAt(startedAt, tmo, totalAt)
  local at = num(startedAt) + num(tmo)
  if totalAt then at = math.min(at, num(totalAt)) end
  return at
end

-- When a waiting job must be discarded instead of run (mirror of domain/timeouts.ts
-- waitingDeadline): its discardAt (expires_at, total timeout) and, before its first
-- attempt, its enqueue TTL. False when there is none.
local function waitingDeadline(discardAt, ttlAt, attempt)
  local deadline = discardAt and tonumber(discardAt)
  if ttlAt and (tonumber(attempt or 0) == 0) then
    deadline = deadline and math.min(deadline, tonumber(ttlAt)) or tonumber(ttlAt)
  end
  return deadline or false
end

-- The lease token of an attempt (mirror of domain/lease.ts leaseToken).
local function leaseToken(nonce, attempt)
  return nonce .. LEASE_TOKEN_SEPARATOR .. text(attempt)
end

-- Why `workerId` presenting `token` may not act on the job (domain leaseProblem),
-- or nil when it holds the current lease.
local function leaseProblem(state, leaseWorker, leaseToken, workerId, token)
  if state ~= 'active' or not leaseWorker then return 'not_active' end
  if leaseWorker ~= workerId then return 'other_worker' end
  if leaseToken ~= token then return 'stale_lease' end
  return nil
end

-- The time a job is listed by in `state` (mirror of domain/job-query.ts
-- listingTimeOf): finished states by completion, active by the start of its
-- attempt, the rest by creation (available jobs are listed by their ready
-- queue, never by this).
local function listingTime(state, createdAt, startedAt, completedAt)
  if TERMINAL[state] then return completedAt or createdAt end
  if state == 'active' then return startedAt or createdAt end
  return createdAt
end

-- A job's member in the listing indexes (mirror of domain/job-query.ts listingKey).
local function listingKey(time, id)
  return pad(time) .. ':' .. id
end

-- An available job's key in listings, from its ready score (mirror of domain/job-query.ts availableListingKey).
local function availableKey(queue, rank)
  return queue .. '#' .. string.format('%016.0f', rank)
end

--[[
  The pending members of the listing indexes of `state` (one listed by
  time): of all queues and, unless the state is active, of `queue`.
  Active jobs have the index of all queues only: they are few (at most the
  workers' concurrency), and a claim or a settlement then writes one index,
  not two. Available jobs have none: their ready queue is their listing.
]]
local function listingMembers(state, queue)
  local indexes = listings[state]
  if not indexes then
    indexes = { all = membersOf('zset', K.listing .. state), byQueue = {} }
    listings[state] = indexes
  end
  if state == 'active' then return indexes.all, nil end
  local ofQueue = indexes.byQueue[queue]
  if not ofQueue then
    ofQueue = membersOf('zset', K.listing .. state .. ':' .. queue)
    indexes.byQueue[queue] = ofQueue
  end
  return indexes.all, ofQueue
end

-- Adds (or, `isListed` false, removes) the job's entries in the listing indexes of `state`, under its listing time.
local function relist(id, queue, state, time, isListed)
  local member = listingKey(time, id)
  local all, ofQueue = listingMembers(state, queue)
  local score = isListed and 0 or false
  all[member] = score
  if ofQueue then ofQueue[member] = score end
end

--[[
  A queue as listings show it: {queue, {state, count...}, paused (0/1),
  enqueue time of the job that runs next (the first of its ready queue; ''
  for none), its limits as K.limits holds them ('' for none)}.
]]
local function queueSummary(queue)
  local next = redis.call('ZRANGE', K.ready .. queue, 0, 0)[1]
  local nextEnqueuedAt = next and redis.call('HGET', K.job .. next, 'enqueuedAt') or ''
  local limits = redis.call('HGET', K.limits, queue) or ''
  return { queue, redis.call('HGETALL', K.counts .. queue), redis.call('SISMEMBER', K.paused, queue), nextEnqueuedAt, limits }
end

--[[ State changes ]]

-- What enter() may need to know of a job, read at once when it lacks any of it.
local KNOWN_FIELDS = { 'priority', 'discardAt', 'ttlAt', 'attempt', 'scheduledAt', 'nextRetryAt', 'createdAt', 'startedAt', 'completedAt' }

--[[ Uniqueness keys (domain unique-policy.ts) ]]

-- Whether a policy's states, as the job hash keeps them (`us`: ",available,active,"), include `state`.
local function countsIn(states, state)
  return string.find(states, ',' .. state .. ',', 1, true) ~= nil
end

-- Drops job `id`'s uniqueness key if the job holds it (a later job may have
-- taken it over) and, given `state`, only if its policy does not count that
-- state. `known` spares the read when it holds the job's uk (false for none)
-- and us as the caller read them.
local function releaseUnique(id, state, known)
  local key, states
  if known and known.uk ~= nil then
    key, states = known.uk, known.us
  else
    local f = redis.call('HMGET', K.job .. id, 'uk', 'us')
    key, states = f[1], f[2]
  end
  if not key or (state and countsIn(states, state)) then return end
  local held = K.unique .. key
  if redis.call('GET', held) == id then redis.call('DEL', held) end
end

--[[
  Makes job `id` enter `state` (any but active: claim makes jobs active)
  from `from` (nil for a new job): sets the state (and the time fields the
  state implies) together with `fields` in one HSET, moves the counters and
  the listing entries, and adds the index entries the state needs (ready
  queue, due time, expiry). `job` holds what the caller already knows of
  the job (queue, priority, deadline (its waitingDeadline, false for none),
  scheduledAt, nextRetryAt, the times it is listed by: createdAt,
  startedAt, completedAt, and its uniqueness fields uk (false for none) and
  us); what it lacks is read.
]]
local function enter(id, job, from, state, now, fields)
  local key = K.job .. id
  local listedByCreation = not (state == 'available' or TERMINAL[state]) or (from and WAITING[from] and from ~= 'available')
  local missing = (state == 'available' and job.priority == nil) or (WAITING[state] and job.deadline == nil)
    or (state == 'retryable' and job.nextRetryAt == nil) or (state == 'scheduled' and job.scheduledAt == nil)
    or (listedByCreation and job.createdAt == nil) or (from == 'active' and job.startedAt == nil)
    or (from and TERMINAL[from] and job.completedAt == nil)
  if missing then
    local known = redis.call('HMGET', key, unpack(KNOWN_FIELDS))
    job.priority = job.priority or known[1]
    if job.deadline == nil then job.deadline = waitingDeadline(known[2], known[3], known[4]) end
    job.scheduledAt = job.scheduledAt or known[5]
    job.nextRetryAt = job.nextRetryAt or known[6]
    job.createdAt = job.createdAt or known[7]
    job.startedAt = job.startedAt or known[8]
    job.completedAt = job.completedAt or known[9]
  end
  fields = fields or {}
  fields[#fields + 1] = 'state'
  fields[#fields + 1] = state
  if state == 'available' then
    fields[#fields + 1] = 'enqueuedAt'
    fields[#fields + 1] = now
    zadd(K.ready .. job.queue, readyScore(job.priority), id)
    available[job.queue] = (available[job.queue] or 0) + 1
  elseif state == 'retryable' then
    zadd(K.due, job.nextRetryAt, id)
  elseif state == 'scheduled' then
    zadd(K.due, job.scheduledAt, id)
  elseif TERMINAL[state] then
    fields[#fields + 1] = 'completedAt'
    fields[#fields + 1] = now
  end
  if WAITING[state] and job.deadline then zadd(K.expiries, job.deadline, id) end
  redis.call('HSET', key, unpack(fields))
  count(job.queue, from, state)
  if from and from ~= 'available' then relist(id, job.queue, from, listingTime(from, job.createdAt, job.startedAt, job.completedAt), false) end
  if state ~= 'available' then relist(id, job.queue, state, listingTime(state, job.createdAt, nil, now), true) end
  -- A new job takes its key in enqueue; a job leaving its policy's states gives it up.
  if from then releaseUnique(id, state, job) end
end

-- Leaves the indexes of the job's current waiting state.
local function unindex(id, queue)
  zrem(K.ready .. queue, id)
  zrem(K.due, id)
  zrem(K.expiries, id)
end

-- Frees the worker's capacity from the job. The lease fields stay in the hash
-- (the job's state says whether they mean anything: only an active job has a
-- lease), which saves a write on every settlement.
local function releaseLease(id, workerId)
  zrem(K.leases, id)
  zrem(K.timeouts, id)
  srem(K.held .. workerId, id)
  freed[workerId] = (freed[workerId] or 0) + 1
end

-- Renews the lease of a held job from `now` (domain confirmedLease): the
-- worker showed it holds the job, so the lease runs to its full expiry.
local function renewLease(id, now)
  local key = K.job .. id
  local f = redis.call('HMGET', key, 'vis', 'stall', 'tmo', 'grace', 'totalAt', 'startedAt')
  local expiresAt = leaseExpiry(f[1], f[2], f[3], f[4], f[5], f[6], tonumber(now), nil)
  redis.call('HSET', key, 'leaseExpiresAt', text(expiresAt), 'leaseConfirmed', '1', 'leaseRenewedAt', text(now))
  zadd(K.leases, text(expiresAt), id)
  return expiresAt
end
