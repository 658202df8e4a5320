--[[
  enqueue: (none) -> scheduled | available | pending, for a batch of jobs.
  Pre:  no id of the batch is taken, nor repeated within it (all or none are stored).
  Post: each job hash is written and indexed by its state (ready queue or due
        time) and its waiting deadline; per-queue counters and the queue set
        are updated; one jobsAvailable signal per queue.
  ARGV: 1 now, then two values per job: a header and the body JSON
        (job-codec.ts newJobArgs). The header holds, separated by the byte
        0x1F (empty for none): id, queue, state, priority, discardAt, ttlAt,
        scheduledAt, type, vis, tmo, grace, stall, totalAt.
  Returns: {'ok'} or {'duplicate', id}.
  Atomic: the script runs alone, and every key shares the prefix's hash slot.
]]
local NAMES = { 'id', 'queue', 'state', 'priority', 'discardAt', 'ttlAt', 'scheduledAt', 'type', 'vis', 'tmo', 'grace', 'stall', 'totalAt' }

local function headerOf(text)
  local h, start = {}, 1
  for _, name in ipairs(NAMES) do
    local stop = string.find(text, '\31', start, true)
    local value = string.sub(text, start, (stop or 0) - 1)
    if value ~= '' then h[name] = value end
    start = (stop or #text) + 1
  end
  return h
end

local now = ARGV[1]
local jobs = {}
local seen = {}
for i = 2, #ARGV, 2 do
  local h = headerOf(ARGV[i])
  if seen[h.id] or redis.call('EXISTS', K.job .. h.id) == 1 then return { 'duplicate', h.id } end
  seen[h.id] = true
  jobs[#jobs + 1] = { h = h, body = ARGV[i + 1] }
end
for _, job in ipairs(jobs) do
  local h = job.h
  -- attempt 0, no errors and no dead-letter mark are what absent fields mean.
  local fields = { 'body', job.body }
  for n = 8, #NAMES do
    local name = NAMES[n]
    if h[name] then
      fields[#fields + 1] = name
      fields[#fields + 1] = h[name]
    end
  end
  for _, name in ipairs({ 'queue', 'priority', 'discardAt', 'ttlAt', 'scheduledAt' }) do
    if h[name] then
      fields[#fields + 1] = name
      fields[#fields + 1] = h[name]
    end
  end
  sadd(K.queues, h.queue)
  enter(h.id, { queue = h.queue, priority = h.priority, deadline = waitingDeadline(h.discardAt, h.ttlAt, 0), scheduledAt = h.scheduledAt }, nil, h.state, now, fields)
end
finish()
return { 'ok' }
