--[[
  extend-lease: renews the lease of a held active job (no state change).
  Pre:  the worker holds the job's current lease (domain leaseProblem).
  Post: the lease is renewed from `now` and confirmed (domain confirmedLease).
  ARGV: 1 now, 2 worker id, 3 job id, 4 lease token.
  Returns: {'ok', expires at} | {'not_found'} | {problem, current state}.
]]
local id = ARGV[3]
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'leaseToken')
if not job[1] then return { 'not_found' } end
local problem = leaseProblem(job[1], job[2], job[3], ARGV[2], ARGV[4])
if problem then return { problem, job[1] } end
local expiresAt = renewLease(id, ARGV[1])
finish()
return { 'ok', int(expiresAt) }
