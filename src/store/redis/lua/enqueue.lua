--[[
  enqueue: (none) -> scheduled | available | pending, for a batch of jobs.
  Pre:  no id of the batch is taken, nor repeated within it (all or none are stored).
  Post: each job hash is written and indexed by its state (ready queue or due
        time) and its expires_at; per-queue counters and the queue set are
        updated; one jobsAvailable signal per queue.
  ARGV: 1 now, then two values per job: a header (id, queue, state, priority,
        expires at, scheduled at, type, visibility timeout, separated by the
        byte 0x1F, empty for none) and the body JSON (job-codec.ts newJobArgs).
  Returns: {'ok'} or {'duplicate', id}.
  Atomic: the script runs alone, and every key shares the prefix's hash slot.
]]
local function fieldsOf(header)
  local parts, start = {}, 1
  while true do
    local stop = string.find(header, '\31', start, true)
    if not stop then
      parts[#parts + 1] = string.sub(header, start)
      return parts
    end
    parts[#parts + 1] = string.sub(header, start, stop - 1)
    start = stop + 1
  end
end

local now = ARGV[1]
local jobs = {}
local seen = {}
for i = 2, #ARGV, 2 do
  local h = fieldsOf(ARGV[i])
  local id = h[1]
  if seen[id] or redis.call('EXISTS', K.job .. id) == 1 then return { 'duplicate', id } end
  seen[id] = true
  jobs[#jobs + 1] = { h = h, body = ARGV[i + 1] }
end
for _, job in ipairs(jobs) do
  local h = job.h
  -- attempt 0, no errors and no dead-letter mark are what absent fields mean.
  local fields = { 'body', job.body, 'type', h[7], 'queue', h[2], 'priority', h[4], 'vis', h[8] }
  if h[5] ~= '' then
    fields[#fields + 1] = 'expiresAt'
    fields[#fields + 1] = h[5]
  end
  if h[6] ~= '' then
    fields[#fields + 1] = 'scheduledAt'
    fields[#fields + 1] = h[6]
  end
  sadd(K.queues, h[2])
  enter(h[1], { queue = h[2], priority = h[4], expiresAt = h[5] ~= '' and h[5], scheduledAt = h[6] }, nil, h[3], now, fields)
end
finish()
return { 'ok' }
