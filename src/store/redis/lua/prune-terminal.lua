--[[
  prune-terminal: removes finished jobs past their retention (no transition:
  the job is forgotten).
  Pre:  each terminal state lists its jobs in completion order; an entry is
        removed only if its job is still in that state and either older than
        the state's retention or beyond the cap. Entries of jobs that left the
        state (RetryJob) are dropped on the way.
  Post: job hashes deleted, counters decremented; over the cap, the oldest
        finished jobs (whatever their state) go first.
  ARGV: 1 now, 2 completed retention, 3 cancelled retention, 4 discarded
        retention (ms), 5 most finished jobs kept (0: no cap), 6 limit.
  Returns: how many jobs were removed.
  Bounded: at most `limit` list entries are examined.
]]
local now = tonumber(ARGV[1])
local budget = tonumber(ARGV[6])
local cutoff = { completed = now - tonumber(ARGV[2]), cancelled = now - tonumber(ARGV[3]), discarded = now - tonumber(ARGV[4]) }
local states = { 'completed', 'cancelled', 'discarded' }
local excess = 0
if tonumber(ARGV[5]) > 0 then
  local total = 0
  for _, state in ipairs(states) do total = total + redis.call('LLEN', K.finished .. state) end
  excess = total - tonumber(ARGV[5])
end

-- The first entry of a state's list whose job is still in that state (dropping the others).
local function head(state)
  while budget > 0 do
    local id = redis.call('LINDEX', K.finished .. state, 0)
    if not id then return false end
    local job = redis.call('HMGET', K.job .. id, 'state', 'queue', 'completedAt')
    if job[1] == state then return { id = id, queue = job[2], at = tonumber(job[3]) } end
    redis.call('LPOP', K.finished .. state)
    budget = budget - 1
  end
  return false
end

local heads = {}
for _, state in ipairs(states) do heads[state] = head(state) end
local pruned = 0
while budget > 0 do
  local oldest
  for _, state in ipairs(states) do
    local h = heads[state]
    if h and (excess > 0 or h.at <= cutoff[state]) and (not oldest or h.at < heads[oldest].at) then oldest = state end
  end
  if not oldest then break end
  local h = heads[oldest]
  redis.call('LPOP', K.finished .. oldest)
  redis.call('DEL', K.job .. h.id)
  count(h.queue, oldest, nil)
  excess = excess - 1
  pruned = pruned + 1
  budget = budget - 1
  heads[oldest] = head(oldest)
end
finish()
return pruned
