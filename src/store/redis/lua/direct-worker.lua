--[[
  direct-worker: an operator directive, as the domain decided it.
  Pre:  the worker exists and its state and directive are still those the
        decision was made from (compare-and-set).
  Post: the decided state, directive and desired state are stored; a changed
        desired state is signalled (pushed to the worker's Beat stream).
  ARGV: 1 worker id, 2 expected state, 3 expected directive ('' for none),
        4 next state, 5 next directive, 6 next desired state.
  Returns: {'not_found'} | {'conflict'} | {'applied'}.
]]
local key = K.worker .. ARGV[1]
local worker = redis.call('HMGET', key, 'state', 'directive', 'desired')
if not worker[1] then return { 'not_found' } end
if worker[1] ~= ARGV[2] or (worker[2] or '') ~= ARGV[3] then return { 'conflict' } end
redis.call('HSET', key, 'state', ARGV[4], 'desired', ARGV[6])
if ARGV[5] == '' then redis.call('HDEL', key, 'directive') else redis.call('HSET', key, 'directive', ARGV[5]) end
if ARGV[6] ~= worker[3] then signals[#signals + 1] = { k = 'd', w = ARGV[1], s = ARGV[6] } end
finish()
return { 'applied' }
