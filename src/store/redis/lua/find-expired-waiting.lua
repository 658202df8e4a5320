--[[
  find-expired-waiting: waiting jobs whose waiting deadline (expires_at,
  enqueue TTL, total timeout: domain waitingDeadline) passed at or before now.
  Post: index entries of jobs that no longer wait are dropped, so they never
        crowd out live ones; nothing else changes (discard-waiting applies
        what the domain decides).
  ARGV: 1 now, 2 limit.
  Returns: {job hash...}, at most `limit`.
  Bounded: at most `limit` index entries are examined. Atomic: one script;
  every argument is checked before the first write.
]]
argCount(2)
local now = argNow(1)
local limit = argCountOf(2)
local jobs = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.expiries, '-inf', now, 'LIMIT', 0, limit)) do
  local key = K.job .. id
  local f = redis.call('HMGET', key, 'state', 'discardAt', 'ttlAt', 'attempt')
  local deadline = f[1] and WAITING[f[1]] and waitingDeadline(f[2], f[3], f[4])
  if deadline and deadline <= now then
    jobs[#jobs + 1] = redis.call('HGETALL', key)
  else
    zrem(K.expiries, id)
  end
end
finish()
return jobs
