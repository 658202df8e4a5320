--[[
  release-undelivered: active -> available, undoing a claim whose job never
  reached its worker; the attempt is given back and nothing is recorded.
  Pre:  the lease token still matches; when `require lapse` is set, also
        that the lease is unconfirmed, expired at `now`, and that its worker
        beat after the job started (it is alive and did not list the job;
        domain isUnconfirmedLapse).
  Post: lease released (capacityFreed), attempt - 1, job back in its ready queue.
  ARGV: 1 now, 2 require lapse (0/1), then per lease: job id, lease token.
  Returns: {transition...}.
]]
local now = ARGV[1]
local requireLapse = ARGV[2] == '1'
local transitions = {}
for i = 3, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'leaseToken', 'leaseExpiresAt', 'leaseConfirmed', 'startedAt', 'queue', 'type', 'attempt')
  local eligible = job[1] == 'active' and job[3] == token
  if eligible and requireLapse then
    local lastBeatAt = redis.call('HGET', K.worker .. job[2], 'lastBeatAt')
    eligible = job[5] ~= '1' and tonumber(job[4]) <= tonumber(now) and lastBeatAt ~= false and tonumber(lastBeatAt) > tonumber(job[6])
  end
  if eligible then
    local attempt = tonumber(job[9]) - 1
    releaseLease(id, job[2])
    enter(id, { queue = job[7] }, 'active', 'available', now, { 'attempt', attempt })
    transitions[#transitions + 1] = transition(id, 'active', 'available', job[2], { job[8], job[7], attempt })
  end
end
finish()
return transitions
