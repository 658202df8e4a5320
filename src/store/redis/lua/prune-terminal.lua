--[[
  prune-terminal: removes finished jobs past their retention (no transition:
  the job is forgotten).
  Pre:  an entry is removed only if its job is still in that terminal state
        and either older than the state's retention or beyond the cap.
  Post: job hashes deleted, counters decremented; over the cap, the oldest
        finished jobs (whatever their state) go first.
  ARGV: 1 now, 2 completed retention, 3 cancelled retention, 4 discarded
        retention (ms), 5 most finished jobs kept (0: no cap), 6 limit.
  Returns: how many jobs were removed.
  Bounded: at most `limit` entries are examined.
]]
local now = tonumber(ARGV[1])
local cutoff = { completed = now - tonumber(ARGV[2]), cancelled = now - tonumber(ARGV[3]), discarded = now - tonumber(ARGV[4]) }
local states = { 'completed', 'cancelled', 'discarded' }
local excess = 0
if tonumber(ARGV[5]) > 0 then
  local total = 0
  for _, state in ipairs(states) do total = total + redis.call('ZCARD', K.finished .. state) end
  excess = total - tonumber(ARGV[5])
end
local pruned = 0
for _ = 1, tonumber(ARGV[6]) do
  local oldest, oldestAt
  for _, state in ipairs(states) do
    local head = redis.call('ZRANGE', K.finished .. state, 0, 0, 'WITHSCORES')
    if head[1] and (excess > 0 or tonumber(head[2]) <= cutoff[state]) and (not oldestAt or tonumber(head[2]) < oldestAt) then
      oldest, oldestAt = state, tonumber(head[2])
    end
  end
  if not oldest then break end
  local id = redis.call('ZPOPMIN', K.finished .. oldest)[1]
  local job = redis.call('HMGET', K.job .. id, 'state', 'queue')
  if job[1] == oldest then
    redis.call('DEL', K.job .. id)
    count(job[2], oldest, nil)
    excess = excess - 1
    pruned = pruned + 1
  end
end
return pruned
