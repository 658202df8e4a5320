--[[
  remove-worker: a registered worker -> (none), with outcomes applied to the
  jobs it holds (Deregister, dead-worker detection).
  Pre:  the worker exists and has not beaten since `ifLastBeatAt` (when
        given); every job it really holds (active under its lease) has an
        item decided for that lease (its token). Otherwise nothing changes
        ({0, {}}) and the caller reads again.
        Entries of its held set whose job is not active under this worker's
        lease (left by a bug or a lost write) are dropped with the set: they
        never block a removal.
  Post: per item whose job is still active under this worker's lease (lib
        leaseProblem), the job enters the decided state (lib applyOutcome);
        other items are skipped. The worker hash, held set and index entries
        are deleted; workerRemoved is signalled. The worker's fact (-> removed,
        with the reason, when it registered and last beat, the jobs it held)
        follows the facts of its jobs.
  ARGV: 1 now, 2 worker id, 3 ifLastBeatAt ('' for none), 4 reason
        (deregistered or dead), 5 item count, 6 stride (10), then per item an
        outcome (scripts/outcome-items.ts OUTCOME_FIELDS; lib argOutcome).
  Returns: {removed (0/1), {transition...}}.
  Bounded: reads the worker's held set (at most its concurrency, plus any
  stale entries it drops). Atomic: one script; every argument is checked
  before the first write.
]]
local now = argNow(1)
local workerId = argId(2)
local ifLastBeatAt = argOptionalTime(3)
local reason = argMember(4, { deregistered = true, dead = true })
local n, first = argBatch(5, OUTCOME_STRIDE)
local items = {}
-- The lease token each job's item was decided for.
local covered = {}
for i = first, first + (n - 1) * OUTCOME_STRIDE, OUTCOME_STRIDE do
  local item = argOutcome(i)
  items[#items + 1] = item
  covered[item.id] = item.token
end

local worker = redis.call('HMGET', K.worker .. workerId, 'lastBeatAt', 'state', 'registeredAt')
local lastBeatAt = worker[1]
if not lastBeatAt or (ifLastBeatAt and tonumber(lastBeatAt) ~= ifLastBeatAt) then return { 0, {} } end
-- A job really held (active under this worker's lease) must have an item decided for that very
-- lease: otherwise it would stay active under the lease of a worker that is gone.
local holding = 0
for _, id in ipairs(redis.call('SMEMBERS', K.held .. workerId)) do
  local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'leaseToken')
  if job[1] == 'active' and job[2] == workerId then
    if covered[id] ~= job[3] then return { 0, {} } end
    holding = holding + 1
  end
end

local transitions = {}
for _, item in ipairs(items) do
  local job = outcomeJob(item.id)
  if job.state and not leaseProblem(job.state, job.leaseWorker, job.leaseToken, workerId, item.token) then
    transitions[#transitions + 1] = applyOutcome(item, job, workerId, now)
  end
end
redis.call('DEL', K.worker .. workerId, K.held .. workerId)
redis.call('ZREM', K.workers, workerId)
redis.call('ZREM', K.workerIds, workerId)
-- The set is gone: its pending removals and the capacity they free mean nothing now.
pending.set[K.held .. workerId] = nil
freed[workerId] = nil
signals[#signals + 1] = { k = 'r', w = workerId }
local details = { reason = reason, registeredAt = worker[3], lastBeatAt = lastBeatAt, activeJobs = holding }
workerFact(workerId, worker[2], 'removed', now, details)
finish()
return { 1, transitions }
