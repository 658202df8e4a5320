--[[
  Shared helpers, prepended to every script of this directory at load time,
  after the generated lib/domain.lua (scripts.ts scriptSource). Nothing here
  runs on its own: each helper is one step that several scripts take
  (reading an argument, a job entering a state, a lease released, a signal
  published). The domain's tables (states, transitions, bounds) come from
  domain.lua; the lease and deadline arithmetic below mirrors
  src/domain/timeouts.ts and lease.ts, and test/contract/lua-domain.test.ts
  proves the two agree.

  KEYS (identical for every script, built in keys.ts):
    1 job prefix      2 ready prefix     3 due zset        4 expiries zset
    5 leases zset     6 seq counter      7 queue names zset (score 0: by name)
    8 counts prefix   9 workers zset (by last beat)       10 worker prefix
   11 held prefix    12 finished prefix 13 signal channel 14 soft timeouts zset
   15 worker ids zset (score 0: by id)
  Times are epoch milliseconds and always arrive in ARGV: scripts never read
  the Redis clock, so they behave the same under a test clock.

  All or nothing: Lua has no rollback, so every script reads all of its
  ARGV through the arg* helpers (which refuse with a BADARG error reply)
  before its first write. The TypeScript encoders never send a bad value;
  a refusal here is a bug, and it leaves the data untouched.

  Writes to shared indexes (sorted sets, sets, counters) are gathered while
  a script runs and issued once per key by flush(), which every writing
  script calls before it returns: a script that changes 200 jobs of one
  queue makes one ZADD and one HINCRBY per state, not 200 of each. No script
  reads an index it has pending writes for before flushing.
]]
local K = {
  job = KEYS[1], ready = KEYS[2], due = KEYS[3], expiries = KEYS[4], leases = KEYS[5],
  seq = KEYS[6], queues = KEYS[7], counts = KEYS[8], workers = KEYS[9], worker = KEYS[10],
  held = KEYS[11], finished = KEYS[12], channel = KEYS[13], timeouts = KEYS[14], workerIds = KEYS[15],
}

-- Integer as a string without exponent or rounding, for values returned to the
-- caller (tostring keeps 14 digits only; values passed to redis.call are exact).
local function int(n)
  return string.format('%.0f', n)
end

--[[ Arguments ]]

-- Instants and durations stay below this: a timestamp the domain accepts
-- plus any duration, and sums of a few of those, are exact in a double.
local MAX_TIME_MS = 2 ^ 50
-- Item counts, limits and budgets stay below this.
local MAX_COUNT = 2 ^ 31

local function refuse(i, problem)
  error({ err = 'BADARG ARGV[' .. i .. '] ' .. problem })
end

local function argText(i)
  local value = ARGV[i]
  if value == nil then refuse(i, 'is missing') end
  return value
end

-- A non-empty string: an id, a token, a required JSON value.
local function argId(i)
  local value = argText(i)
  if value == '' then refuse(i, 'must not be empty') end
  return value
end

-- An integer from min to max, written as digits: tonumber alone would also
-- read exponents, hexadecimal, 'nan' and 'inf'.
local function argInt(i, min, max)
  local text = argText(i)
  local n = #text <= 20 and string.match(text, '^%-?%d+$') and tonumber(text)
  if not n or n < min or n > max then
    refuse(i, "'" .. string.sub(text, 1, 40) .. "' is not an integer from " .. int(min) .. ' to ' .. int(max))
  end
  return n
end

local function argOptionalInt(i, min, max)
  if argText(i) == '' then return nil end
  return argInt(i, min, max)
end

-- A finite number from min to max.
local function argNumber(i, min, max)
  local text = argText(i)
  local n = tonumber(text)
  -- NaN is the one value unequal to itself; the bounds exclude the infinities.
  if not n or n ~= n or n < min or n > max then
    refuse(i, "'" .. string.sub(text, 1, 40) .. "' is not a number from " .. min .. ' to ' .. max)
  end
  return n
end

-- The current time: a timestamp the domain accepts.
local function argNow(i)
  return argInt(i, TIMESTAMP_MIN_MS, TIMESTAMP_MAX_MS)
end

-- An instant (a deadline may lie past the last timestamp a client may send) or a duration.
local function argTime(i)
  return argInt(i, 0, MAX_TIME_MS)
end

local function argOptionalTime(i)
  return argOptionalInt(i, 0, MAX_TIME_MS)
end

local function argCountOf(i)
  return argInt(i, 0, MAX_COUNT)
end

local function argFlag(i)
  local text = argText(i)
  if text ~= '0' and text ~= '1' then refuse(i, 'is not 0 or 1') end
  return text == '1'
end

-- A member of `allowed` (a set of domain.lua, such as WAITING or NEXT_STATES.active).
local function argMember(i, allowed)
  local text = argText(i)
  if not allowed[text] then refuse(i, "'" .. string.sub(text, 1, 40) .. "' is not allowed here") end
  return text
end

-- Exactly `n` arguments: a script with a fixed list.
local function argCount(n)
  if #ARGV ~= n then error({ err = 'BADARG expected ' .. n .. ' arguments, got ' .. #ARGV }) end
end

--[[
  A batch whose header is at ARGV[at]: its item count, then its stride (the
  number of fields per item, which must be `stride`, the fields this script
  reads), then the items, which must end the arguments. Returns the count
  and the index of the first item's first field.
]]
local function argBatch(at, stride)
  local count = argCountOf(at)
  if argInt(at + 1, 0, 1000) ~= stride then refuse(at + 1, 'is not the stride (' .. stride .. ') this script reads') end
  if #ARGV ~= at + 1 + count * stride then
    error({ err = 'BADARG ' .. count .. ' items of ' .. stride .. ' fields from ARGV[' .. (at + 2) .. '] do not end at ARGV[' .. #ARGV .. ']' })
  end
  return count, at + 2
end

--[[ Pending writes ]]

-- Pending writes, keyed by the Redis key they go to.
local pending = { zadd = {}, zrem = {}, sadd = {}, srem = {}, rpush = {}, hincr = {} }
-- Queues that lost a job for good (pruned): dropped once they hold none.
local shrunk = {}
local available = {}
local freed = {}
local signals = {}

local function listOf(group, key)
  local list = pending[group][key]
  if not list then
    list = {}
    pending[group][key] = list
  end
  return list
end

local function zadd(key, score, member)
  local list = listOf('zadd', key)
  list[#list + 1] = score
  list[#list + 1] = member
end
local function zrem(key, member)
  local list = listOf('zrem', key)
  list[#list + 1] = member
end
local function sadd(key, member)
  local list = listOf('sadd', key)
  list[#list + 1] = member
end
local function srem(key, member)
  local list = listOf('srem', key)
  list[#list + 1] = member
end
local function rpush(key, member)
  local list = listOf('rpush', key)
  list[#list + 1] = member
end

-- Moves the job's state counter of its queue from `from` to `to` (nil for a
-- job that appears or disappears).
local function count(queue, from, to)
  local deltas = pending.hincr[queue]
  if not deltas then
    deltas = {}
    pending.hincr[queue] = deltas
  end
  if from then deltas[from] = (deltas[from] or 0) - 1 end
  if to then deltas[to] = (deltas[to] or 0) + 1 end
  if not to then shrunk[queue] = true end
end

-- A queue whose every count is zero holds no job: its counts and its entry in
-- the queue index go, so queues nobody uses any more cost nothing.
local function dropIfEmpty(queue)
  local counts = redis.call('HVALS', K.counts .. queue)
  for _, n in ipairs(counts) do
    if tonumber(n) ~= 0 then return end
  end
  redis.call('DEL', K.counts .. queue)
  redis.call('ZREM', K.queues, queue)
end

-- Issues every pending write, in chunks: unpack stays far below Lua's limit of
-- about 8,000 values.
local function flush()
  local function chunked(command, key, values)
    for i = 1, #values, 4000 do
      redis.call(command, key, unpack(values, i, math.min(i + 4000 - 1, #values)))
    end
  end
  for key, values in pairs(pending.zadd) do chunked('ZADD', key, values) end
  for key, values in pairs(pending.zrem) do chunked('ZREM', key, values) end
  for key, values in pairs(pending.sadd) do chunked('SADD', key, values) end
  for key, values in pairs(pending.srem) do chunked('SREM', key, values) end
  for key, values in pairs(pending.rpush) do chunked('RPUSH', key, values) end
  for queue, deltas in pairs(pending.hincr) do
    for state, delta in pairs(deltas) do
      if delta ~= 0 then redis.call('HINCRBY', K.counts .. queue, state, delta) end
    end
  end
  for queue in pairs(shrunk) do dropIfEmpty(queue) end
  pending = { zadd = {}, zrem = {}, sadd = {}, srem = {}, rpush = {}, hincr = {} }
  shrunk = {}
end

-- Flushes, then publishes the signals gathered since the last call.
local function finish()
  flush()
  for queue, n in pairs(available) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'a', q = queue, n = n }))
  end
  for worker, n in pairs(freed) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'c', w = worker, n = n }))
  end
  for _, message in ipairs(signals) do
    redis.call('PUBLISH', K.channel, cjson.encode(message))
  end
  available, freed, signals = {}, {}, {}
end

--[[ Domain arithmetic (mirrors of src/domain) ]]

-- Store-wide FIFO sequence, reserved in blocks so a batch costs one INCRBY.
local seqNext, seqLast = 0, -1
local function nextSeq()
  if seqNext > seqLast then
    seqLast = redis.call('INCRBY', K.seq, 1024)
    seqNext = seqLast - 1023
  end
  seqNext = seqNext + 1
  return seqNext - 1
end

-- Ready queues order by this score: higher priority first, then FIFO. The
-- priority part is a multiple of 2^41 and sequences stay below it, so over
-- the domain's priority range every score is exact in a double.
local SEQ_SPAN = 2 ^ 41
local function readyScoreOf(priority, seq)
  return (PRIORITY_MAX - tonumber(priority)) * SEQ_SPAN + seq
end
local function readyScore(priority)
  return readyScoreOf(priority, nextSeq())
end

--[[
  The earliest deadline of an active job's lease (mirror of domain/timeouts.ts
  leaseExpiry): visibility (at most the confirmation window until confirmed),
  stall, execution timeout plus grace period, total timeout. `job` holds the
  hash fields vis, stall, tmo, grace, totalAt and startedAt.
]]
local function leaseExpiry(job, renewedAt, confirmWithin)
  local visibility = tonumber(job.vis)
  if confirmWithin then visibility = math.min(visibility, confirmWithin) end
  local at = math.min(renewedAt + visibility, renewedAt + tonumber(job.stall), tonumber(job.startedAt) + tonumber(job.tmo) + tonumber(job.grace))
  if job.totalAt then at = math.min(at, tonumber(job.totalAt)) end
  return at
end

-- When the worker is told to stop an attempt (mirror of domain/timeouts.ts
-- softTimeoutAt): its execution timeout, or its total timeout if earlier.
local function softTimeoutAt(startedAt, tmo, totalAt)
  local at = tonumber(startedAt) + tonumber(tmo)
  if totalAt then at = math.min(at, tonumber(totalAt)) end
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
  return nonce .. LEASE_TOKEN_SEPARATOR .. int(attempt)
end

-- Why `workerId` presenting `token` may not act on the job (domain leaseProblem),
-- or nil when it holds the current lease.
local function leaseProblem(state, leaseWorker, leaseToken, workerId, token)
  if state ~= 'active' or not leaseWorker then return 'not_active' end
  if leaseWorker ~= workerId then return 'other_worker' end
  if leaseToken ~= token then return 'stale_lease' end
  return nil
end

--[[ State changes ]]

--[[
  Makes job `id` enter `state`: sets the state (and the time fields the state
  implies) together with `fields` in one HSET, moves the counters, and adds
  the index entries the state needs (ready queue, due time, expiry,
  retention). `job` holds what the caller already knows of the job (queue,
  priority, deadline (its waitingDeadline, false for none), scheduledAt,
  nextRetryAt); what it lacks is read.
]]
local function enter(id, job, from, state, now, fields)
  local key = K.job .. id
  local missing = (state == 'available' and job.priority == nil) or (WAITING[state] and job.deadline == nil)
    or (state == 'retryable' and job.nextRetryAt == nil) or (state == 'scheduled' and job.scheduledAt == nil)
  if missing then
    local known = redis.call('HMGET', key, 'priority', 'discardAt', 'ttlAt', 'attempt', 'scheduledAt', 'nextRetryAt')
    job.priority = job.priority or known[1]
    if job.deadline == nil then job.deadline = waitingDeadline(known[2], known[3], known[4]) end
    job.scheduledAt = job.scheduledAt or known[5]
    job.nextRetryAt = job.nextRetryAt or known[6]
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
    -- Finished jobs are listed in completion order, for retention.
    rpush(K.finished .. state, id)
  end
  if WAITING[state] and job.deadline then zadd(K.expiries, job.deadline, id) end
  redis.call('HSET', key, unpack(fields))
  count(job.queue, from, state)
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
  local job = { vis = f[1], stall = f[2], tmo = f[3], grace = f[4], totalAt = f[5], startedAt = f[6] }
  local expiresAt = leaseExpiry(job, tonumber(now), nil)
  redis.call('HSET', key, 'leaseExpiresAt', expiresAt, 'leaseConfirmed', '1', 'leaseRenewedAt', now)
  zadd(K.leases, expiresAt, id)
  return expiresAt
end

-- A transition as scripts return it: id, type, queue, from, to, attempt, worker,
-- started at (for an attempt that ended). `known` holds type, queue, attempt
-- and, optionally, startedAt.
local function transition(id, from, to, workerId, known)
  local fields = known or redis.call('HMGET', K.job .. id, 'type', 'queue', 'attempt', 'startedAt')
  return { id, fields[1], fields[2], from, to, int(tonumber(fields[3] or 0)), workerId or '', (from == 'active' and fields[4]) or '' }
end

--[[ Outcomes of attempts (fail, recover, remove-worker) ]]

-- The fields of an outcome item, in order (outcome-items.ts OUTCOME_FIELDS).
local OUTCOME_STRIDE = 7

--[[
  Reads the outcome item whose first field is ARGV[at]: job id, lease token,
  state (one the state machine allows after active), next retry at (for
  retryable; '' otherwise), dead letter (0/1), error JSON, errors JSON.
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
  return item
end

-- The job fields an outcome needs, by HMGET position.
local OUTCOME_JOB_FIELDS = { 'state', 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'queue', 'type', 'attempt', 'startedAt' }
local function outcomeJob(id)
  local f = redis.call('HMGET', K.job .. id, unpack(OUTCOME_JOB_FIELDS))
  return {
    state = f[1], leaseWorker = f[2], leaseToken = f[3], leaseExpiresAt = f[4], queue = f[5], type = f[6], attempt = f[7],
    startedAt = f[8],
  }
end

--[[
  Applies a decided outcome to the active job `job` (read by outcomeJob) held
  by `holder`: the lease is released and the job enters the outcome's state
  with its error, history and retry time or dead-letter mark. Returns the
  transition.
]]
local function applyOutcome(item, job, holder, now)
  local fields = { 'error', item.error, 'errors', item.errors }
  if item.state == 'retryable' then
    fields[#fields + 1] = 'nextRetryAt'
    fields[#fields + 1] = item.nextRetryAt
  elseif item.state == 'discarded' then
    fields[#fields + 1] = 'deadLetter'
    fields[#fields + 1] = item.deadLetter and 1 or 0
  end
  releaseLease(item.id, holder)
  enter(item.id, { queue = job.queue, nextRetryAt = item.nextRetryAt }, 'active', item.state, now, fields)
  return transition(item.id, 'active', item.state, holder, { job.type, job.queue, job.attempt, job.startedAt })
end

--[[ Reading workers ]]

-- A worker as reads return it: {worker hash, {held job id...}}, or nil when it is not registered.
local function workerSnapshot(workerId)
  local fields = redis.call('HGETALL', K.worker .. workerId)
  if #fields == 0 then return nil end
  return { fields, redis.call('SMEMBERS', K.held .. workerId) }
end

--[[ Worker state changes (record-beat, direct-worker) ]]

--[[
  Reads the compare-and-set of a worker's state whose first field is
  ARGV[at] (scripts/state-change.ts): expected state, expected directive
  ('' for none), next state, next directive ('' for none), next desired state.
]]
local function argStateChange(at)
  local change = {
    expectedState = argMember(at, WORKER_STATES), expectedDirective = argText(at + 1), nextState = argMember(at + 2, WORKER_STATES),
    nextDirective = argText(at + 3), desired = argMember(at + 4, WORKER_STATES),
  }
  if change.expectedDirective ~= '' then argMember(at + 1, WORKER_STATES) end
  if change.nextDirective ~= '' then argMember(at + 3, WORKER_STATES) end
  return change
end

-- Stores the decided state, directive and desired state, with `fields` (more field/value pairs) in the same HSET.
local function applyStateChange(key, change, fields)
  fields = fields or {}
  for _, value in ipairs({ 'state', change.nextState, 'desired', change.desired }) do fields[#fields + 1] = value end
  if change.nextDirective == '' then
    redis.call('HDEL', key, 'directive')
  else
    fields[#fields + 1] = 'directive'
    fields[#fields + 1] = change.nextDirective
  end
  redis.call('HSET', key, unpack(fields))
end
