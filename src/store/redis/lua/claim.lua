--[[
  claim: available -> active, for up to `max` jobs of a worker's queues.
  Pre:  the worker exists and its desired state is running; it never holds
        more than its concurrency.
  Post: jobs are taken queue by queue in the order given, each queue by
        priority then FIFO; each gets attempt + 1, started_at and a lease of
        this worker whose token is "<nonce>.<attempt>" and which lasts
        min(visibility timeout, confirmation window) until confirmed (domain
        claimLease and leaseToken). A job past its expires_at is never
        claimed: it leaves the ready queue and promote-due discards it.
  ARGV: 1 now, 2 worker id, 3 max, 4 lease nonce, 5 confirmation window (ms),
        6.. queues in order.
  Returns: {'not_found'} | {'ok', isRunning (0/1), free capacity left,
           {{id, attempt, lease expires at, body, enqueued at, errors, error}...}}.
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
      local job = redis.call('HMGET', key, 'state', 'expiresAt', 'attempt', 'vis', 'body', 'enqueuedAt', 'errors', 'error')
      if job[1] == 'available' and not (job[2] and tonumber(job[2]) <= now) then
        local attempt = tonumber(job[3] or 0) + 1
        local leaseExpiresAt = int(now + math.min(tonumber(job[4]), confirmWithin))
        redis.call('HSET', key, 'state', 'active', 'attempt', attempt, 'startedAt', startedAt, 'leaseWorker', workerId,
          'leaseToken', ARGV[4] .. '.' .. attempt, 'leaseExpiresAt', leaseExpiresAt, 'leaseConfirmed', '0')
        count(queue, 'available', 'active')
        if job[2] then zrem(K.expiries, id) end
        zadd(K.leases, leaseExpiresAt, id)
        sadd(held, id)
        claimed[#claimed + 1] = { id, attempt, leaseExpiresAt, job[5], job[6] or '', job[7] or '[]', job[8] or '' }
      end
    end
  end
end
finish()
return { 'ok', 1, free - #claimed, claimed }
