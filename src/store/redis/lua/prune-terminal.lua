--[[
  prune-terminal: removes finished jobs past their retention (no transition:
  the job is forgotten).
  Pre:  each terminal state lists its jobs in completion order; an entry is
        removed only if its job is still in that state and either older than
        the state's retention or beyond the cap. Entries of jobs that left the
        state (RetryJob) or are gone are dropped on the way.
  Post: job hashes deleted, counters decremented; over the cap, the oldest
        finished jobs (whatever their state) go first. A queue whose last job
        goes loses its counts and its entry in the queue index (lib flush).
  ARGV: 1 now, 2 completed retention, 3 cancelled retention, 4 discarded
        retention (ms), 5 most finished jobs kept (0: no cap), 6 limit.
  Returns: how many jobs were removed.
  Bounded: at most `limit` list entries are examined. Atomic: one script;
  every argument is checked before the first write.
]]
argCount(6)
local now = argNow(1)
local retention = { completed = argTime(2), cancelled = argTime(3), discarded = argTime(4) }
local maxJobs = argCountOf(5)
local budget = argCountOf(6)
local cutoff = {}
for _, state in ipairs(TERMINAL_STATES) do cutoff[state] = now - retention[state] end
local excess = 0
if maxJobs > 0 then
  local total = 0
  for _, state in ipairs(TERMINAL_STATES) do total = total + redis.call('LLEN', K.finished .. state) end
  excess = total - maxJobs
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
for _, state in ipairs(TERMINAL_STATES) do heads[state] = head(state) end
local pruned = 0
while budget > 0 do
  local oldest
  for _, state in ipairs(TERMINAL_STATES) do
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
