--[[
  release-undelivered: active -> available, undoing a claim whose job never
  reached its worker; the attempt is given back and nothing is recorded
  against the job (its fact says why: undelivered).
  Pre:  per lease, the lease token still matches; when `require lapse` is
        set, also that the lease is unconfirmed, expired at `now`, and that
        its worker beat after the job started (it is alive and did not list
        the job; domain isUnconfirmedLapse). Other leases are left alone.
  Post: lease released (capacityFreed), attempt - 1, job back in its ready queue.
  ARGV: 1 now, 2 require lapse (0/1), 3 lease count, 4 stride (2), then per
        lease: job id, lease token.
  Returns: {transition...}.
  Atomic: one script; every argument is checked before the first write.
]]
local STRIDE = 2
local now = argNow(1)
local requireLapse = argFlag(2)
local n, first = argBatch(3, STRIDE)
local leases = {}
for i = first, first + (n - 1) * STRIDE, STRIDE do
  leases[#leases + 1] = { id = argId(i), token = argId(i + 1) }
end

local transitions = {}
for _, lease in ipairs(leases) do
  local id = lease.id
  local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'leaseConfirmed', 'startedAt', 'queue', 'type',
    'attempt', 'discardAt', 'ttlAt', 'createdAt', 'tp')
  local eligible = job[1] == 'active' and job[3] == lease.token
  if eligible and requireLapse then
    local lastBeatAt = redis.call('HGET', K.worker .. job[2], 'lastBeatAt')
    eligible = job[5] ~= '1' and tonumber(job[4]) <= now and lastBeatAt ~= false and tonumber(lastBeatAt) > tonumber(job[6])
  end
  if eligible then
    local attempt = tonumber(job[9]) - 1
    releaseLease(id, job[2])
    -- The waiting deadline of the attempt given back (an enqueue TTL applies again before the first).
    local deadline = waitingDeadline(job[10], job[11], attempt)
    enter(id, { queue = job[7], deadline = deadline, createdAt = job[12], startedAt = job[6] }, 'active', 'available', now, { 'attempt', attempt })
    local known = { type = job[8], queue = job[7], attempt = attempt, startedAt = job[6], tp = job[13] }
    transitions[#transitions + 1] = transition(id, known, 'active', 'available', now, { workerId = job[2], reason = 'undelivered' })
  end
end
finish()
return transitions
