--[[
  register-worker: (none) -> a registered worker.
  Pre:  no worker with this id is registered.
  Post: the worker hash is written and the worker is indexed by its last
        beat (silence detection) and by its id (paged listings); its fact
        (none -> its state, with its queues and concurrency) is recorded.
  ARGV: 1 worker id, 2 registration JSON, 3 concurrency, 4 registered at,
        5 state, 6 directive ('' for none), 7 desired state, 8 last beat at,
        9 last sequence, 10 reported job ids JSON, 11 queues JSON (for the
        fact: the script reads no JSON), 12 owner (the principal that
        registers it; '' for anonymous) (worker-codec.ts).
  Returns: {'ok'} | {'duplicate'}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(12)
local workerId = argId(1)
local lastBeatAt = argTime(8)
local concurrency = argInt(3, 1, MAX_CONCURRENCY)
local registeredAt = argTime(4)
local state = argMember(5, WORKER_STATES)
local fields = {
  'registration', argId(2), 'concurrency', concurrency, 'registeredAt', registeredAt,
  'state', state, 'desired', argMember(7, WORKER_STATES), 'lastBeatAt', lastBeatAt,
  'lastSequence', argInt(9, 0, 2 ^ 53), 'reportedJobIds', argId(10), 'owner', argText(12),
}
local queues = argId(11)
if argText(6) ~= '' then
  fields[#fields + 1] = 'directive'
  fields[#fields + 1] = argMember(6, WORKER_STATES)
end
local key = K.worker .. workerId
if redis.call('EXISTS', key) == 1 then return { 'duplicate' } end
redis.call('HSET', key, unpack(fields))
redis.call('ZADD', K.workers, lastBeatAt, workerId)
redis.call('ZADD', K.workerIds, 0, workerId)
workerFact(workerId, 'none', state, registeredAt, { queues = queues, concurrency = concurrency })
finish()
return { 'ok' }
