--[[
  claim: available -> active, for up to `max` jobs of a worker's queues,
  within a byte budget.
  Pre:  the worker exists and its desired state is running; it never holds
        more than its concurrency.
  Post: jobs are taken queue by queue in the order given, paused queues
        skipped, each queue by priority then FIFO; each gets attempt + 1, started_at, a soft-timeout
        entry (domain softTimeoutAt), and a lease of this worker whose token
        is leaseToken(nonce, attempt) and whose expiry is the earliest of its
        deadlines, the visibility part capped by the confirmation window until
        confirmed (domain claimLease, leaseToken, leaseExpiry). A job past its
        waiting deadline is never claimed: it leaves the ready queue and the
        expiry pass discards it.
        Byte budget: a job is claimed only if the stored size of the jobs
        claimed so far (body, errors, error, checkpoint, parent results) plus its own stays
        within `max bytes`; the first job is claimed whatever its size. The
        first job that does not fit ends the claim: it, and the jobs after it,
        stay in their ready queue, in their place in line.
        Each claimed job enters the active listing (by its start) and, when
        the log is on, records its fact (available -> active, with the
        worker and its enqueue time).
        Queue limits (domain queue-limits.ts): a queue with a max active
        gives at most max active - its active count; one with a rate at most
        limit - the starts its log holds after `now - period` (older ones
        are trimmed), and logs each start ("<id>:<attempt>" by `now`). A
        queue whose rate window is full while its ready queue holds jobs is
        reported with when its oldest counted start leaves the window.
        A claim whose `now` is earlier than the newest start logged for its
        rate-limited queues (another replica's claim read the clock later
        but ran first) claims at that start instead, so that logs only grow
        forward and one claim's trim never drops a start a later-running
        claim still counts (domain claimTime).
        Rate-limit events (domain rate-limit-events.ts), sampled through the
        queue's key under the rate-limit event prefix (`quiet`, `held`): a
        queue whose limits left no slot while its ready queue held jobs and
        the claim wanted more records rate_limit.exceeded (the limit that
        holds: the rate when its window is full, else max active), unless an
        episode is open (`held`) or it is before `quiet`; then the key holds
        `held` = the strategy and `quiet` = now + the window, without expiry.
        The first job of a queue with an open episode that the claim starts
        records rate_limit.released (before the job's own fact); `held` goes
        and the key expires a window after `quiet`.
  ARGV: 1 now, 2 worker id, 3 max, 4 lease nonce, 5 confirmation window (ms),
        6 max bytes, 7 queue count, 8 stride (1), 9.. queues in order.
        The first job of a pending workflow to start makes the workflow
        running (lib/workflows.lua Workflow.started), its fact after the job's.
  Returns: {'not_found'} | {'ok', isRunning (0/1), free capacity left,
           {job...}, stopped at the byte budget (0/1),
           {queue, its rate window's next slot...} for queues held back by rate,
           the time the claim started its jobs at, the queues whose ready
           queue this claim found empty (a later claim finds nothing there
           until a job is made available, which signals)}. Each job is one
           text: its id, attempt, lease expiry, body, enqueued at, errors,
           error, checkpoint and parent results, joined by FIELD_SEPARATOR
           (none of them holds it: ids are visible ASCII, the rest numbers or
           JSON, which escapes control characters). One text a job, not a
           table of nine: the server reads each element of a reply as a
           buffer, then as a string.
  Bounded: at most `max` jobs; a ready queue's entries are read `max` at a
  time, and only those the claim went through leave it.
  Atomic: one script; every argument is checked before the first write.
]]
local now = argNow(1)
local workerId = argId(2)
local max = argCountOf(3)
local nonce = argId(4)
local confirmWithin = argTime(5)
local maxBytes = argCountOf(6)
local queueCount, firstQueue = argBatch(7, 1)
local named = {}
for q = firstQueue, firstQueue + queueCount - 1 do named[#named + 1] = argId(q) end

local worker = redis.call('HMGET', K.worker .. workerId, 'desired', 'concurrency')
if not worker[1] then return { 'not_found' } end
if worker[1] ~= 'running' then return { 'ok', 0, 0, {}, 0, {}, int(now), {} } end
-- A paused queue delivers nothing (its jobs stay first in line).
local queues = {}
local paused = #named > 0 and redis.call('SMISMEMBER', K.paused, unpack(named)) or {}
for q, queue in ipairs(named) do
  if paused[q] == 0 then queues[#queues + 1] = queue end
end
local limitTexts = #queues > 0 and redis.call('HMGET', K.limits, unpack(queues)) or {}
-- Starts are logged in the order claims run: never before the newest one logged.
for q, queue in ipairs(queues) do
  if limitTexts[q] and string.match(limitTexts[q], ',%d+,') then
    local newest = redis.call('ZRANGE', K.starts .. queue, -1, -1, 'WITHSCORES')[2]
    if newest and tonumber(newest) > now then now = tonumber(newest) end
  end
end
-- Per queue, the jobs this claim took (its counts hash moves at finish).
local takenFrom = {}

-- The queue's active jobs, this claim's included.
local function activeOf(queue)
  return tonumber(redis.call('HGET', K.counts .. queue, 'active') or 0) + (takenFrom[queue] or 0)
end

--[[
  How many of the queue's jobs may start now under its limits (`text` as
  the limits hash holds it; math.huge without), whether it has a rate, and
  when its rate window reopens if the rate is what holds them back
  (domain queue-limits.ts rateWindow).
]]
local function allowance(queue, text)
  if not text then return math.huge, false end
  local maxActive, rate, period = string.match(text, '^(%d*),(%d*),(%d*)$')
  local slots = math.huge
  if maxActive ~= '' then slots = math.max(0, tonumber(maxActive) - activeOf(queue)) end
  if rate == '' then return slots, false end
  local log, limit = K.starts .. queue, tonumber(rate)
  redis.call('ZREMRANGEBYSCORE', log, '-inf', now - tonumber(period))
  local counted = redis.call('ZCARD', log)
  if counted < limit then return math.min(slots, limit - counted), true end
  local oldest = redis.call('ZRANGE', log, counted - limit, counted - limit, 'WITHSCORES')[2]
  return 0, true, tonumber(oldest) + tonumber(period)
end

--[[ Rate-limit events: per queue, its sampling key as read once ({quiet, held}). ]]
local sampling = {}
local function samplingOf(queue)
  local found = sampling[queue]
  if not found then
    local f = redis.call('HMGET', K.rateLimitEvents .. queue, 'quiet', 'held')
    found = { quiet = tonumber(f[1]), held = f[2] or nil }
    sampling[queue] = found
  end
  return found
end

-- The sampling window of limits whose rate period is `period` ('' for none; domain limitEventWindowMs).
local function eventWindow(period)
  return math.max(tonumber(period) or 0, RATE_LIMIT_EVENT_MIN_WINDOW_MS)
end

-- Job `id` of the queue (limits `text`) starts: it ends the queue's open episode, if any.
local function releaseHold(queue, text, id)
  local found = samplingOf(queue)
  if not found.held then return end
  rateLimitFact(queue, 'released', found.held, now, nil, nil, id)
  local key = K.rateLimitEvents .. queue
  redis.call('HDEL', key, 'held')
  -- A window longer than needed: the replicas' clocks differ a little.
  local period = select(3, string.match(text, '^(%d*),(%d*),(%d*)$'))
  redis.call('PEXPIRE', key, math.max(0, (found.quiet or now) - now) + eventWindow(period))
  found.held = nil
end

--[[
  The queue (limits `text`) left no slot while jobs waited and the claim
  wanted more: the limit that holds (domain limitHold) is told, unless its
  episode is open or its window has not passed (domain sampleHold).
]]
local function holdBack(queue, text)
  local maxActive, rate, period = string.match(text, '^(%d*),(%d*),(%d*)$')
  local strategy, limit, current
  local counted = rate ~= '' and redis.call('ZCARD', K.starts .. queue) or 0
  if rate ~= '' and counted >= tonumber(rate) then
    strategy, limit, current = 'rate', rate, counted
  elseif maxActive ~= '' and activeOf(queue) >= tonumber(maxActive) then
    strategy, limit, current = 'concurrency', maxActive, activeOf(queue)
  end
  local found = samplingOf(queue)
  if not strategy or found.held or (found.quiet and now < found.quiet) then return end
  found.quiet, found.held = now + eventWindow(period), strategy
  local key = K.rateLimitEvents .. queue
  redis.call('HSET', key, 'quiet', int(found.quiet), 'held', strategy)
  redis.call('PERSIST', key)
  rateLimitFact(queue, 'exceeded', strategy, now, limit, current, nil)
end

local held = K.held .. workerId
local free = tonumber(worker[2]) - redis.call('SCARD', held)
local limit = math.min(max, free)
local startedAt = int(now)
local claimed = {}
local bytes = 0
local isFull = false

--[[
  The index entries of the claimed jobs, written at the end, one command
  per index: each claimed job enters each index once (no pending change of
  another kind can meet it), so they skip lib flush()'s per-member map.
]]
local leases, timeouts, heldIds, activeListing, leftExpiries = {}, {}, {}, {}, {}
local listedAt = listingKey(now, '')

-- Claims the available job `id` (its hash `key`) whose fields `f` were just read; returns its attempt.
local function take(id, key, f, queue, deadline)
  local attempt = text((tonumber(f[4]) or 0) + 1)
  local expiresAt = text(leaseExpiry(f[5], f[6], f[7], f[8], f[9], now, now, confirmWithin))
  redis.call('HSET', key, 'state', 'active', 'attempt', attempt, 'startedAt', startedAt, 'leaseWorker', workerId,
    'leaseToken', leaseToken(nonce, attempt), 'leaseExpiresAt', expiresAt, 'leaseConfirmed', '0', 'leaseRenewedAt', startedAt)
  local n = #leases
  leases[n + 1], leases[n + 2] = expiresAt, id
  timeouts[n + 1], timeouts[n + 2] = text(softTimeoutAt(now, f[7], f[9])), id
  activeListing[n + 1], activeListing[n + 2] = '0', listedAt .. id
  heldIds[#heldIds + 1] = id
  if deadline then leftExpiries[#leftExpiries + 1] = id end
  if isLogging() then
    record(jobFactLine(startedAt, id, f[15], queue, 'available', 'active', attempt, workerId, nil, nil, nil, nil, startedAt, f[11], nil, nil,
      nil, nil, nil, f[16]))
  end
  local sep = FIELD_SEPARATOR
  claimed[#claimed + 1] = id .. sep .. attempt .. sep .. expiresAt .. sep .. f[10] .. sep .. (f[11] or '') .. sep .. (f[12] or '[]') .. sep
    .. (f[13] or '') .. sep .. (f[14] or '') .. sep .. (f[18] or '')
  -- The first of a workflow's jobs to start makes it running.
  if f[17] then Workflow.started(f[17], now) end
  return attempt
end

local heldBack = {}
local drained = {}
for q, queue in ipairs(queues) do
  local ready = K.ready .. queue
  local slots, hasRate = allowance(queue, limitTexts[q])
  local isReleaseChecked = not limitTexts[q]
  -- The queue's first jobs are read, then those the claim went through (taken, or no longer
  -- available) leave it at once: ZPOPMIN would format every score, and put back what it popped beyond.
  while #claimed < limit and not isFull and slots > 0 do
    local wanted = math.min(limit - #claimed, slots)
    local ids = redis.call('ZRANGE', ready, 0, wanted - 1)
    if #ids == 0 then
      drained[#drained + 1] = queue
      break
    end
    local passed = 0
    for _, id in ipairs(ids) do
      local key = K.job .. id
      local f = redis.call('HMGET', key, 'state', 'discardAt', 'ttlAt', 'attempt', 'vis', 'stall', 'tmo', 'grace', 'totalAt',
        'body', 'enqueuedAt', 'errors', 'error', 'checkpoint', 'type', 'tp', 'wf', 'parentResults')
      local deadline = waitingDeadline(f[2], f[3], f[4])
      if f[1] == 'available' and not (deadline and deadline <= now) then
        local size = #f[10] + #(f[12] or '') + #(f[13] or '') + #(f[14] or '') + #(f[18] or '')
        if #claimed > 0 and bytes + size > maxBytes then
          isFull = true
          break
        end
        bytes = bytes + size
        if not isReleaseChecked then
          isReleaseChecked = true
          releaseHold(queue, limitTexts[q], id)
        end
        local attempt = take(id, key, f, queue, deadline)
        takenFrom[queue] = (takenFrom[queue] or 0) + 1
        slots = slots - 1
        if hasRate then redis.call('ZADD', K.starts .. queue, text(now), id .. ':' .. attempt) end
      end
      passed = passed + 1
    end
    if passed > 0 then redis.call('ZREMRANGEBYRANK', ready, 0, passed - 1) end
    if #ids < wanted and not isFull then
      drained[#drained + 1] = queue
      break
    end
  end
  if isFull then break end
  if slots == 0 and redis.call('ZCARD', ready) > 0 then
    -- Jobs wait for the rate window: say when it reopens, so that someone wakes then.
    local opensAt
    if hasRate then opensAt = select(3, allowance(queue, limitTexts[q])) end
    if opensAt then
      heldBack[#heldBack + 1] = queue
      heldBack[#heldBack + 1] = int(opensAt)
    end
    -- Only a claim that wanted more of the queue's jobs was held back by its limits.
    if #claimed < limit then holdBack(queue, limitTexts[q]) end
  end
end
for queue, n in pairs(takenFrom) do count(queue, 'available', 'active', n) end
callChunked('ZADD', K.leases, leases)
callChunked('ZADD', K.timeouts, timeouts)
callChunked('ZADD', K.listing .. 'active', activeListing)
callChunked('SADD', held, heldIds)
callChunked('ZREM', K.expiries, leftExpiries)
finish()
return { 'ok', 1, free - #claimed, claimed, isFull and 1 or 0, heldBack, startedAt, drained }
