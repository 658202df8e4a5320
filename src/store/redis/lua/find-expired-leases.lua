--[[
  find-expired-leases (read only): active jobs whose lease lapsed at or before now.
  ARGV: 1 now, 2 limit.
  Returns: {job hash...}, at most `limit`.
  Bounded: at most `limit` index entries.
]]
argCount(2)
local now = argNow(1)
local limit = argCountOf(2)
local jobs = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.leases, '-inf', now, 'LIMIT', 0, limit)) do
  jobs[#jobs + 1] = redis.call('HGETALL', K.job .. id)
end
return jobs
