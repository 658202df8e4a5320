--[[
  enqueue: (none) -> scheduled | available | pending, for a batch of jobs.
  Pre:  no id of the batch is taken, nor repeated within it (all or none are stored).
  Post: each job hash is written and indexed by its state (ready queue or due
        time) and its waiting deadline; per-queue counters and the queue set
        are updated; one jobsAvailable signal per queue.
  ARGV: 1 now, then 14 values per job (job-codec.ts newJobArgs), '' for none:
        id, queue, state, priority, discardAt, ttlAt, scheduledAt, type, vis,
        tmo, grace, stall, totalAt, body JSON. Separate values rather than one
        string to split: the script does no parsing.
  Returns: {'ok'} or {'duplicate', id}.
  Atomic: the script runs alone, and every key shares the prefix's hash slot.
]]
local STRIDE = 14
local now = ARGV[1]
local seen = {}
for i = 2, #ARGV, STRIDE do
  local id = ARGV[i]
  if seen[id] or redis.call('EXISTS', K.job .. id) == 1 then return { 'duplicate', id } end
  seen[id] = true
end
local seenQueues = {}
for i = 2, #ARGV, STRIDE do
  local id, queue, state, priority = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local discardAt, ttlAt, scheduledAt, totalAt = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 12]
  -- attempt 0, no errors and no dead-letter mark are what absent fields mean.
  local fields = {
    'body', ARGV[i + 13], 'type', ARGV[i + 7], 'vis', ARGV[i + 8], 'tmo', ARGV[i + 9], 'grace', ARGV[i + 10],
    'stall', ARGV[i + 11], 'queue', queue, 'priority', priority,
  }
  local optional = { discardAt = discardAt, ttlAt = ttlAt, scheduledAt = scheduledAt, totalAt = totalAt }
  for name, value in pairs(optional) do
    if value ~= '' then
      fields[#fields + 1] = name
      fields[#fields + 1] = value
    end
  end
  if not seenQueues[queue] then
    seenQueues[queue] = true
    sadd(K.queues, queue)
  end
  local deadline = waitingDeadline(discardAt ~= '' and discardAt or nil, ttlAt ~= '' and ttlAt or nil, 0)
  enter(id, { queue = queue, priority = priority, deadline = deadline, scheduledAt = scheduledAt ~= '' and scheduledAt or nil }, nil, state, now, fields)
end
finish()
return { 'ok' }
