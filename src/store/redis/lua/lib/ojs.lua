--[[
  Shared helpers, prepended to every script of this directory at load time
  (scripts.ts). Nothing here runs on its own: each helper is one step of a
  transition that several scripts make (a job becomes available, a lease is
  released, a signal is published).

  KEYS (identical for every script, built in keys.ts):
    1 job prefix      2 ready prefix     3 due zset        4 expiries zset
    5 leases zset     6 seq counter      7 queues set      8 counts prefix
    9 workers zset   10 worker prefix   11 held prefix    12 finished prefix
   13 signal channel
  Times are epoch milliseconds and always arrive in ARGV: scripts never read
  the Redis clock, so they behave the same under a test clock.
]]
local K = {
  job = KEYS[1], ready = KEYS[2], due = KEYS[3], expiries = KEYS[4], leases = KEYS[5],
  seq = KEYS[6], queues = KEYS[7], counts = KEYS[8], workers = KEYS[9], worker = KEYS[10],
  held = KEYS[11], finished = KEYS[12], channel = KEYS[13],
}

local TERMINAL = { completed = true, cancelled = true, discarded = true }
local WAITING = { scheduled = true, available = true, pending = true, retryable = true }

-- Integer as a string without exponent or rounding (tostring keeps 14 digits only).
local function int(n)
  return string.format('%.0f', n)
end

-- Higher priority first, then FIFO by a store-wide sequence (priority is -1000..1000,
-- the sequence stays below 2^41, so the score is exact in a double).
local function readyScore(priority)
  local seq = redis.call('INCR', K.seq)
  return int((1000 - tonumber(priority)) * 2199023255552 + seq)
end

-- Signals are gathered while a script runs and published once at its end.
local available = {}
local freed = {}
local signals = {}

local function publishSignals()
  for queue, n in pairs(available) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'a', q = queue, n = n }))
  end
  for worker, n in pairs(freed) do
    redis.call('PUBLISH', K.channel, cjson.encode({ k = 'c', w = worker, n = n }))
  end
  for _, message in ipairs(signals) do
    redis.call('PUBLISH', K.channel, cjson.encode(message))
  end
end

-- Moves the job's state counter of its queue from `from` to `to`.
local function count(queue, from, to)
  if from then redis.call('HINCRBY', K.counts .. queue, from, -1) end
  if to then redis.call('HINCRBY', K.counts .. queue, to, 1) end
end

-- Enters `state`: sets the state field, moves the counters, and adds the index
-- entries the state needs (ready queue, due time, expiry, retention).
local function enter(id, queue, from, state, now)
  local key = K.job .. id
  redis.call('HSET', key, 'state', state)
  count(queue, from, state)
  if state == 'available' then
    local priority = redis.call('HGET', key, 'priority')
    redis.call('ZADD', K.ready .. queue, readyScore(priority), id)
    redis.call('HSET', key, 'enqueuedAt', now)
    available[queue] = (available[queue] or 0) + 1
  elseif state == 'retryable' then
    redis.call('ZADD', K.due, redis.call('HGET', key, 'nextRetryAt'), id)
  elseif state == 'scheduled' then
    redis.call('ZADD', K.due, redis.call('HGET', key, 'scheduledAt'), id)
  end
  if WAITING[state] then
    local expiresAt = redis.call('HGET', key, 'expiresAt')
    if expiresAt then redis.call('ZADD', K.expiries, expiresAt, id) end
  end
  if TERMINAL[state] then
    redis.call('HSET', key, 'completedAt', now)
    redis.call('ZADD', K.finished .. state, now, id)
  end
end

-- Leaves the indexes of the job's current (waiting) state.
local function unindex(id, queue)
  redis.call('ZREM', K.ready .. queue, id)
  redis.call('ZREM', K.due, id)
  redis.call('ZREM', K.expiries, id)
end

-- Drops the job's lease and frees its worker's capacity.
local function releaseLease(id, workerId)
  redis.call('HDEL', K.job .. id, 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'leaseConfirmed')
  redis.call('ZREM', K.leases, id)
  if redis.call('SREM', K.held .. workerId, id) == 1 then
    freed[workerId] = (freed[workerId] or 0) + 1
  end
end

-- Why `workerId` presenting `token` may not act on the job (domain leaseProblem),
-- or nil when it holds the current lease.
local function leaseProblem(state, leaseWorker, leaseToken, workerId, token)
  if state ~= 'active' or not leaseWorker then return 'not_active' end
  if leaseWorker ~= workerId then return 'other_worker' end
  if leaseToken ~= token then return 'stale_lease' end
  return nil
end

-- The desired state of a worker, as stored by the application (domain desiredState).
local function desiredOf(workerKey)
  return redis.call('HGET', workerKey, 'desired')
end

local function transition(id, from, to, workerId)
  local fields = redis.call('HMGET', K.job .. id, 'type', 'queue', 'attempt')
  return { id, fields[1], fields[2], from, to, fields[3] or '0', workerId or '' }
end
