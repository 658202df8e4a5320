--[[
  enqueue: (none) -> scheduled | available | pending, for a batch of jobs.
  Pre:  no id of the batch is taken, nor repeated within it (all or none are stored).
  Post: each job hash is written and indexed by its state (ready queue or due
        time) and its expires_at; per-queue counters and the queue set are
        updated; one jobsAvailable signal per queue.
  ARGV: 1 now, 2 job count, then per job: id, queue, state, pair count,
        and that many field/value pairs of the job hash (job-codec.ts).
  Returns: {'ok'} or {'duplicate', id}.
  Atomic: the script runs alone, and every key shares the prefix's hash slot.
]]
local now = ARGV[1]
local jobs = {}
local seen = {}
local i = 3
for _ = 1, tonumber(ARGV[2]) do
  local job = { id = ARGV[i], queue = ARGV[i + 1], state = ARGV[i + 2], first = i + 4, pairs = tonumber(ARGV[i + 3]) }
  if seen[job.id] or redis.call('EXISTS', K.job .. job.id) == 1 then return { 'duplicate', job.id } end
  seen[job.id] = true
  jobs[#jobs + 1] = job
  i = job.first + 2 * job.pairs
end
for _, job in ipairs(jobs) do
  redis.call('HSET', K.job .. job.id, unpack(ARGV, job.first, job.first + 2 * job.pairs - 1))
  redis.call('SADD', K.queues, job.queue)
  enter(job.id, job.queue, nil, job.state, now)
end
publishSignals()
return { 'ok' }
