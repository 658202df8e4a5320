--[[
  record-beat: a worker's heartbeat, with the state change the domain decided.
  Pre:  the worker exists; the beat is not late (sequence 0, or above the last
        one); the worker's state and directive are still those the decision
        was made from (compare-and-set).
  Post: last beat, sequence, reported jobs and the decided state, directive
        and desired state are stored; every listed job the worker holds has
        its lease renewed from now and confirmed (domain confirmedLease); a
        changed desired state is signalled. Listed jobs to stop are those
        the store port's BeatOutcome describes (timed out, reclaimed).
  ARGV: 1 now, 2 worker id, 3 sequence, 4 expected state, 5 expected
        directive ('' for none), 6 next state, 7 next directive, 8 next
        desired state, 9 reported job ids as JSON, 10.. listed job ids.
  Returns: {'not_found'} | {'stale' | 'conflict', desired state} |
           {'applied', desired state, {cancelled id...}, {timed-out id...}, {reclaimed id...}}.
]]
local now = ARGV[1]
local workerId = ARGV[2]
local key = K.worker .. workerId
local worker = redis.call('HMGET', key, 'state', 'directive', 'desired', 'lastSequence')
if not worker[1] then return { 'not_found' } end
local sequence = tonumber(ARGV[3])
if sequence ~= 0 and sequence <= tonumber(worker[4]) then return { 'stale', worker[3] } end
if worker[1] ~= ARGV[4] or (worker[2] or '') ~= ARGV[5] then return { 'conflict', worker[3] } end

redis.call('HSET', key, 'state', ARGV[6], 'desired', ARGV[8], 'lastBeatAt', now, 'reportedJobIds', ARGV[9])
if ARGV[7] == '' then redis.call('HDEL', key, 'directive') else redis.call('HSET', key, 'directive', ARGV[7]) end
if sequence ~= 0 then redis.call('HSET', key, 'lastSequence', sequence) end
redis.call('ZADD', K.workers, now, workerId)

local cancelled, timedOut, reclaimed = {}, {}, {}
for i = 10, #ARGV do
  local id = ARGV[i]
  local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'startedAt', 'tmo', 'totalAt')
  if job[1] == 'active' and job[2] == workerId then
    renewLease(id, now)
    local softAt = tonumber(job[3]) + tonumber(job[4])
    if job[5] then softAt = math.min(softAt, tonumber(job[5])) end
    if softAt <= tonumber(now) then timedOut[#timedOut + 1] = id end
  elseif job[1] == 'cancelled' then
    cancelled[#cancelled + 1] = id
  elseif job[1] and job[1] ~= 'completed' then
    reclaimed[#reclaimed + 1] = id
  end
end
if ARGV[8] ~= worker[3] then signals[#signals + 1] = { k = 'd', w = workerId, s = ARGV[8] } end
finish()
return { 'applied', ARGV[8], cancelled, timedOut, reclaimed }
