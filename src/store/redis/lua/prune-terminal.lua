--[[
  prune-terminal: removes finished jobs past their retention (no transition:
  the job is forgotten, and no fact is recorded).
  Pre:  the listing index of each terminal state holds its jobs by
        completion time (lib enter keeps it exact); a job is removed only if
        older than its state's retention or beyond the cap.
  Post: job hashes and their listing entries deleted, counters decremented;
        over the cap, the oldest finished jobs (whatever their state) go
        first. A queue whose last job goes loses its counts and its entry in
        the queue index unless it is paused (lib flush). In the same pass,
        uncounted, ended workflows past the retention of their end
        (completed: completed retention; failed: discarded; cancelled:
        cancelled) lose their plan and run; their jobs follow their own
        retention.
  ARGV: 1 now, 2 completed retention, 3 cancelled retention, 4 discarded
        retention (ms), 5 most finished jobs kept (0: no cap), 6 limit.
  Returns: how many jobs were removed.
  Bounded: reads at most `limit` index entries per terminal state (none
  when nothing is past its retention and the cap is kept) and
  removes at most `limit` jobs, and at most `limit` workflows per end state. Atomic: one script; every argument is
  checked before the first write.
]]
argCount(6)
local now = argNow(1)
local retention = { completed = argTime(2), cancelled = argTime(3), discarded = argTime(4) }
local maxJobs = argCountOf(5)
local limit = argCountOf(6)
local cutoff = {}
for _, state in ipairs(TERMINAL_STATES) do cutoff[state] = now - retention[state] end
local excess = 0
if maxJobs > 0 then
  local total = 0
  for _, state in ipairs(TERMINAL_STATES) do total = total + redis.call('ZCARD', K.listing .. state) end
  excess = total - maxJobs
end

-- Each state's entries that this pass may remove, oldest first, at most `limit`
-- (removals stay pending until the end: the indexes are read once), and the
-- position of each state's next one. Those past the retention come first: a
-- lex range ends before the first member listed after the cutoff, so a pass
-- with nothing due reads nothing. Over the cap, up to `excess` newer ones
-- may go too, oldest first whatever their state.
local oldest, position = {}, {}
for _, state in ipairs(TERMINAL_STATES) do
  local key = K.listing .. state
  local due = {}
  if limit > 0 and cutoff[state] >= 0 then
    due = redis.call('ZRANGEBYLEX', key, '-', '(' .. pad(cutoff[state] + 1), 'LIMIT', 0, limit)
  end
  local wanted = math.min(limit, #due + math.max(excess, 0))
  oldest[state] = wanted > #due and redis.call('ZRANGEBYLEX', key, '-', '+', 'LIMIT', 0, wanted) or due
  position[state] = 1
end

-- The next entry of a state: its job id and completion time.
local function head(state)
  local key = oldest[state][position[state]]
  if not key then return nil end
  return { id = string.sub(key, 17), at = tonumber(string.sub(key, 1, 15)) }
end

local pruned = 0
while pruned < limit do
  local first, firstHead
  for _, state in ipairs(TERMINAL_STATES) do
    local h = head(state)
    if h and (excess > 0 or h.at <= cutoff[state]) and (not firstHead or h.at < firstHead.at) then first, firstHead = state, h end
  end
  if not first then break end
  position[first] = position[first] + 1
  local queue = redis.call('HGET', K.job .. firstHead.id, 'queue')
  releaseUnique(firstHead.id, nil)
  redis.call('DEL', K.job .. firstHead.id)
  relist(firstHead.id, queue, first, firstHead.at, false)
  count(queue, first, nil)
  excess = excess - 1
  pruned = pruned + 1
end

-- Ended workflows, oldest first per end state (lib/workflows.lua indexes them by end time).
local workflowCutoff = { completed = cutoff.completed, failed = cutoff.discarded, cancelled = cutoff.cancelled }
for state, before in pairs(workflowCutoff) do
  local key = K.workflowEnded .. state
  for _, id in ipairs(limit > 0 and redis.call('ZRANGEBYSCORE', key, '-inf', before, 'LIMIT', 0, limit) or {}) do
    redis.call('DEL', K.workflow .. id, K.workflowPlan .. id)
    zrem(key, id)
  end
end
finish()
return pruned
