--[[
  record-beat: a worker's heartbeat, with the state change the domain decided.
  Pre:  the worker exists; the beat is not late (sequence 0, or above the last
        one); the worker's state and directive are still those the decision
        was made from (compare-and-set).
  Post: last beat, sequence, reported jobs and the decided state, directive
        and desired state are stored; every listed job the worker holds has
        its lease renewed from now and confirmed (domain confirmedLease); a
        changed desired state is signalled. Listed jobs to stop are those
        the store port's BeatOutcome describes (timed out, reclaimed). A
        changed worker state records its fact; every applied beat publishes
        a heartbeat notice (its state, and each renewed lease with its new
        expiry), live only: never stored.
  ARGV: 1 now, 2 worker id, 3 sequence, then a state change (lib
        argStateChange): 4 expected state, 5 expected directive ('' for
        none), 6 next state, 7 next directive, 8 next desired state; then
        9 reported job ids as JSON, 10 listed job count, 11 stride (1),
        12.. listed job ids.
  Returns: {'not_found'} | {'stale' | 'conflict', desired state} |
           {'applied', desired state, {cancelled id...}, {timed-out id...}, {reclaimed id...}}.
  Bounded: reads the listed jobs only. Atomic: one script; every argument is
  checked before the first write.
]]
local now = argNow(1)
local workerId = argId(2)
local sequence = argInt(3, 0, 2 ^ 53)
local change = argStateChange(4)
local reported = argId(9)
local n, first = argBatch(10, 1)
local listed = {}
for i = first, first + n - 1 do listed[#listed + 1] = argId(i) end

local key = K.worker .. workerId
local worker = redis.call('HMGET', key, 'state', 'directive', 'desired', 'lastSequence')
if not worker[1] then return { 'not_found' } end
if sequence ~= 0 and sequence <= tonumber(worker[4]) then return { 'stale', worker[3] } end
if worker[1] ~= change.expectedState or (worker[2] or '') ~= change.expectedDirective then return { 'conflict', worker[3] } end

local fields = { 'lastBeatAt', now, 'reportedJobIds', reported }
if sequence ~= 0 then
  fields[#fields + 1] = 'lastSequence'
  fields[#fields + 1] = sequence
end
applyStateChange(key, change, fields)
redis.call('ZADD', K.workers, now, workerId)

local cancelled, timedOut, reclaimed = {}, {}, {}
local renewed = {}
for _, id in ipairs(listed) do
  local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'startedAt', 'tmo', 'totalAt', 'type', 'queue', 'attempt')
  if job[1] == 'active' and job[2] == workerId then
    renewed[#renewed + 1] = renewedLease(id, { type = job[6], queue = job[7], attempt = job[8] }, renewLease(id, now))
    if softTimeoutAt(job[3], job[4], job[5]) <= now then timedOut[#timedOut + 1] = id end
  elseif job[1] == 'cancelled' then
    cancelled[#cancelled + 1] = id
  elseif job[1] and job[1] ~= 'completed' then
    reclaimed[#reclaimed + 1] = id
  end
end
if change.desired ~= worker[3] then signals[#signals + 1] = { k = 'd', w = workerId, s = change.desired } end
if change.nextState ~= worker[1] then workerFact(workerId, worker[1], change.nextState, now, { activeJobs = #listed }) end
publishHeartbeat(workerId, now, change.nextState, renewed)
finish()
return { 'applied', change.desired, cancelled, timedOut, reclaimed }
