--[[
  claim: available -> active, for up to `max` jobs of a worker's queues.
  Pre:  the worker exists and its desired state is running; it never holds
        more than its concurrency.
  Post: jobs are taken queue by queue in the order given, each queue by
        priority then FIFO; each gets attempt + 1, started_at, a soft-timeout
        entry (domain softTimeoutAt), and a lease of this worker whose token
        is "<nonce>.<attempt>" and whose expiry is the earliest of its
        deadlines, the visibility part capped by the confirmation window until
        confirmed (domain claimLease, leaseToken, leaseExpiry). A job past its
        waiting deadline is never claimed: it leaves the ready queue and the
        expiry pass discards it.
  ARGV: 1 now, 2 worker id, 3 max, 4 lease nonce, 5 confirmation window (ms),
        6.. queues in order.
  Returns: {'not_found'} | {'ok', isRunning (0/1), free capacity left,
           {{id, attempt, lease expires at, body, enqueued at, errors, error,
             checkpoint}...}}.
]]
local now = tonumber(ARGV[1])
local workerId = ARGV[2]
local worker = redis.call('HMGET', K.worker .. workerId, 'desired', 'concurrency')
if not worker[1] then return { 'not_found' } end
if worker[1] ~= 'running' then return { 'ok', 0, 0, {} } end
local held = K.held .. workerId
local free = tonumber(worker[2]) - redis.call('SCARD', held)
local limit = math.min(tonumber(ARGV[3]), free)
local confirmWithin = tonumber(ARGV[5])
local startedAt = int(now)
local claimed = {}
for q = 6, #ARGV do
  local queue = ARGV[q]
  while #claimed < limit do
    local popped = redis.call('ZPOPMIN', K.ready .. queue, limit - #claimed)
    if #popped == 0 then break end
    for p = 1, #popped, 2 do
      local id = popped[p]
      local key = K.job .. id
      local f = redis.call('HMGET', key, 'state', 'discardAt', 'ttlAt', 'attempt', 'vis', 'stall', 'tmo', 'grace', 'totalAt',
        'body', 'enqueuedAt', 'errors', 'error', 'checkpoint')
      local deadline = waitingDeadline(f[2], f[3], f[4])
      if f[1] == 'available' and not (deadline and deadline <= now) then
        local attempt = tonumber(f[4] or 0) + 1
        local lease = { vis = f[5], stall = f[6], tmo = f[7], grace = f[8], totalAt = f[9], startedAt = now }
        local leaseExpiresAt = leaseExpiry(lease, now, confirmWithin)
        redis.call('HSET', key, 'state', 'active', 'attempt', attempt, 'startedAt', startedAt, 'leaseWorker', workerId,
          'leaseToken', ARGV[4] .. '.' .. attempt, 'leaseExpiresAt', leaseExpiresAt, 'leaseConfirmed', '0', 'leaseRenewedAt', startedAt)
        count(queue, 'available', 'active')
        if deadline then zrem(K.expiries, id) end
        zadd(K.leases, leaseExpiresAt, id)
        zadd(K.timeouts, math.min(now + tonumber(f[7]), tonumber(f[9] or now + tonumber(f[7]))), id)
        sadd(held, id)
        claimed[#claimed + 1] = { id, attempt, int(leaseExpiresAt), f[10], f[11] or '', f[12] or '[]', f[13] or '', f[14] or '' }
      end
    end
  end
end
finish()
return { 'ok', 1, free - #claimed, claimed }
