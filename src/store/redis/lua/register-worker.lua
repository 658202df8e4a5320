--[[
  register-worker: (none) -> a registered worker.
  Pre:  no worker with this id is registered.
  Post: the worker hash is written and the worker is indexed by its last beat.
  ARGV: 1 worker id, 2 last beat at, then field/value pairs of the worker hash.
  Returns: {'ok'} | {'duplicate'}.
]]
local key = K.worker .. ARGV[1]
if redis.call('EXISTS', key) == 1 then return { 'duplicate' } end
redis.call('HSET', key, unpack(ARGV, 3))
redis.call('ZADD', K.workers, ARGV[2], ARGV[1])
return { 'ok' }
