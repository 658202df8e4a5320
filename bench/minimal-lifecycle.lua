#!lua name=minimal_lifecycle
--[[
  The least a Redis store with one record per job does for a job's life,
  for the benchmark's floor (bench/redis-floors.ts): the price of Redis
  functions that keep a hash per job, a ready queue, leases, the jobs each
  worker holds and an event log, on this machine, with nothing else. It is
  no job store: no priorities, deadlines, listings, counters, limits,
  unique keys, workflows or signals, no checks of its arguments, and its
  facts arrive built.

  KEYS[1]: a key prefix with a hash tag.
  enqueue: ARGV count, then id, body per job, then the batch's facts as one text.
  claim:   ARGV now, worker, max, nonce.          Returns {id, attempt, body} per job.
  ack:     ARGV now, worker, count, then id, token per job.  Returns the jobs completed.
]]

local function enqueue(keys, args)
  local prefix = keys[1]
  local n = tonumber(args[1])
  local seq = redis.call('INCRBY', prefix .. 'seq', n) - n
  local ready = {}
  for i = 1, n do
    local id = args[2 * i]
    redis.call('HSET', prefix .. 'job:' .. id, 'body', args[2 * i + 1], 'state', 'available')
    ready[2 * i - 1], ready[2 * i] = string.format('%d', seq + i), id
  end
  redis.call('ZADD', prefix .. 'ready', unpack(ready))
  redis.call('XADD', prefix .. 'events', '*', 'f', args[2 * n + 2])
  return n
end

local function claim(keys, args)
  local prefix = keys[1]
  local now, worker, max, nonce = args[1], args[2], tonumber(args[3]), args[4]
  local expiresAt = string.format('%d', tonumber(now) + 60000)
  local ids = redis.call('ZRANGE', prefix .. 'ready', 0, max - 1)
  if #ids == 0 then return {} end
  redis.call('ZREMRANGEBYRANK', prefix .. 'ready', 0, #ids - 1)
  local claimed, leases, facts = {}, {}, {}
  for i, id in ipairs(ids) do
    local key = prefix .. 'job:' .. id
    local f = redis.call('HMGET', key, 'state', 'body', 'attempt')
    local attempt = string.format('%d', (tonumber(f[3]) or 0) + 1)
    redis.call('HSET', key, 'state', 'active', 'attempt', attempt, 'lease', worker .. '|' .. nonce .. '.' .. attempt)
    leases[2 * i - 1], leases[2 * i] = expiresAt, id
    facts[i] = id .. '\31' .. attempt
    claimed[i] = { id, attempt, f[2] }
  end
  redis.call('ZADD', prefix .. 'leases', unpack(leases))
  redis.call('SADD', prefix .. 'held:' .. worker, unpack(ids))
  redis.call('XADD', prefix .. 'events', '*', 'f', now .. '\31' .. worker .. '\30' .. table.concat(facts, '\30'))
  return claimed
end

local function ack(keys, args)
  local prefix = keys[1]
  local now, worker, n = args[1], args[2], tonumber(args[3])
  local done = {}
  for i = 1, n do
    local id, token = args[2 + 2 * i], args[3 + 2 * i]
    local key = prefix .. 'job:' .. id
    local f = redis.call('HMGET', key, 'state', 'lease')
    if f[1] == 'active' and f[2] == worker .. '|' .. token then
      redis.call('HSET', key, 'state', 'completed', 'completedAt', now)
      done[#done + 1] = id
    end
  end
  if #done > 0 then
    redis.call('ZREM', prefix .. 'leases', unpack(done))
    redis.call('SREM', prefix .. 'held:' .. worker, unpack(done))
    redis.call('XADD', prefix .. 'events', '*', 'f', now .. '\31' .. worker .. '\30' .. table.concat(done, '\30'))
  end
  return #done
end

redis.register_function('minimal_enqueue', enqueue)
redis.register_function('minimal_claim', claim)
redis.register_function('minimal_ack', ack)
