--[[
  find-expired-leases (read only): active jobs whose lease lapsed at or before now.
  ARGV: 1 now, 2 limit.
  Returns: {job hash...}, at most `limit`.
]]
local jobs = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.leases, '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))) do
  jobs[#jobs + 1] = redis.call('HGETALL', K.job .. id)
end
return jobs
