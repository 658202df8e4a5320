--[[
  list-active-heartbeats (read only): when active jobs last showed signs of
  life, those nearest their lease expiry first.
  ARGV: 1 limit.
  Returns: {{queue, lease renewed at}...}, at most `limit`.
  Bounded: at most `limit` index entries.
]]
argCount(1)
local limit = argCountOf(1)
local found = {}
if limit == 0 then return found end
for _, id in ipairs(redis.call('ZRANGE', K.leases, 0, limit - 1)) do
  local job = redis.call('HMGET', K.job .. id, 'queue', 'leaseRenewedAt', 'startedAt')
  if job[1] then found[#found + 1] = { job[1], job[2] or job[3] or '0' } end
end
return found
