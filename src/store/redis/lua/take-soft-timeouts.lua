--[[
  take-soft-timeouts: takes the active jobs whose execution timeout passed, so
  that their workers are told once (whichever replica runs it first).
  Post: the jobs' soft-timeout entries are removed (entries of jobs no longer
        active are dropped too).
  ARGV: 1 now, 2 limit.
  Returns: {{job id, worker id}...}, at most `limit`.
  Bounded: at most `limit` entries. Atomic: one script; every argument is
  checked before the first write.
]]
argCount(2)
local now = argNow(1)
local limit = argCountOf(2)
local taken = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.timeouts, '-inf', now, 'LIMIT', 0, limit)) do
  zrem(K.timeouts, id)
  local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker')
  if job[1] == 'active' and job[2] then taken[#taken + 1] = { id, job[2] } end
end
finish()
return taken
