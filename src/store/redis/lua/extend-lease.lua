--[[
  extend-lease: renews the lease of a held active job (no state change).
  Pre:  the worker holds the job's current lease (domain leaseProblem).
  Post: the lease is renewed from `now` and confirmed (domain confirmedLease);
        a heartbeat notice (the job and its new lease expiry) is published,
        live only: never stored.
  ARGV: 1 now, 2 worker id, 3 job id, 4 lease token.
  Returns: {'ok', expires at} | {'not_found'} | {problem, current state}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(4)
local now = argNow(1)
local workerId = argId(2)
local id = argId(3)
local token = argId(4)
local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'leaseToken', 'type', 'queue', 'attempt')
if not job[1] then return { 'not_found' } end
local problem = leaseProblem(job[1], job[2], job[3], workerId, token)
if problem then return { problem, job[1] } end
local expiresAt = renewLease(id, now)
publishHeartbeat(workerId, argText(1), nil, { renewedLease(id, { type = job[4], queue = job[5], attempt = job[6] }, expiresAt) })
finish()
return { 'ok', int(expiresAt) }
