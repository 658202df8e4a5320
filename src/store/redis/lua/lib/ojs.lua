--[[
  Shared helpers, prepended to every script of this directory at load time
  (scripts.ts). Nothing here runs on its own: each helper is one step of a
  transition that several scripts make (a job enters a state, a lease is
  released, a signal is published).

  KEYS (identical for every script, built in keys.ts):
    1 job prefix      2 ready prefix     3 due zset        4 expiries zset
    5 leases zset     6 seq counter      7 queues set      8 counts prefix
    9 workers zset   10 worker prefix   11 held prefix    12 finished prefix
   13 signal channel 14 soft timeouts zset
  Times are epoch milliseconds and always arrive in ARGV: scripts never read
  the Redis clock, so they behave the same under a test clock.

  Writes to shared indexes (sorted sets, sets, counters) are gathered while
  a script runs and issued once per key by flush(), which every script
  calls before it returns: a script that changes 200 jobs of one queue makes
  one ZADD and one HINCRBY per state, not 200 of each. No script reads an
  index it has pending writes for before flushing.
]]
local K = {
  job = KEYS[1], ready = KEYS[2], due = KEYS[3], expiries = KEYS[4], leases = KEYS[5],
  seq = KEYS[6], queues = KEYS[7], counts = KEYS[8], workers = KEYS[9], worker = KEYS[10],
  held = KEYS[11], finished = KEYS[12], channel = KEYS[13], timeouts = KEYS[14],
}

local TERMINAL = { completed = true, cancelled = true, discarded = true }
local WAITING = { scheduled = true, available = true, pending = true, retryable = true }

-- Integer as a string without exponent or rounding, for values returned to the
-- caller (tostring keeps 14 digits only; values passed to redis.call are exact).
local function int(n)
  return string.format('%.0f', n)
end

-- Pending writes, keyed by the Redis key they go to.
local pending = { zadd = {}, zrem = {}, sadd = {}, srem = {}, rpush = {}, hincr = {} }
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

-- Moves the job's state counter of its queue from `from` to `to`.
local function count(queue, from, to)
  local deltas = pending.hincr[queue]
  if not deltas then
    deltas = {}
    pending.hincr[queue] = deltas
  end
  if from then deltas[from] = (deltas[from] or 0) - 1 end
  if to then deltas[to] = (deltas[to] or 0) + 1 end
end

-- Issues every pending write (in chunks, to stay within Lua's argument limit).
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
  pending = { zadd = {}, zrem = {}, sadd = {}, srem = {}, rpush = {}, hincr = {} }
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

-- Higher priority first, then FIFO (priority is -1000..1000 and the
-- sequence stays below 2^41, so the score is exact in a double).
local function readyScore(priority)
  return (1000 - tonumber(priority)) * 2199023255552 + nextSeq()
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

-- Why `workerId` presenting `token` may not act on the job (domain leaseProblem),
-- or nil when it holds the current lease.
local function leaseProblem(state, leaseWorker, leaseToken, workerId, token)
  if state ~= 'active' or not leaseWorker then return 'not_active' end
  if leaseWorker ~= workerId then return 'other_worker' end
  if leaseToken ~= token then return 'stale_lease' end
  return nil
end

-- A transition as scripts return it: id, type, queue, from, to, attempt, worker,
-- started at (for an attempt that ended). `known` holds type, queue, attempt
-- and, optionally, startedAt.
local function transition(id, from, to, workerId, known)
  local fields = known or redis.call('HMGET', K.job .. id, 'type', 'queue', 'attempt', 'startedAt')
  return { id, fields[1], fields[2], from, to, fields[3] or '0', workerId or '', (from == 'active' and fields[4]) or '' }
end
