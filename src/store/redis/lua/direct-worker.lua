--[[
  direct-worker: an operator directive, as the domain decided it.
  Pre:  the worker exists and its state and directive are still those the
        decision was made from (compare-and-set).
  Post: the decided state, directive and desired state are stored; a changed
        desired state is signalled (pushed to the worker's Beat stream).
  ARGV: 1 worker id, then a state change (lib argStateChange): 2 expected
        state, 3 expected directive ('' for none), 4 next state, 5 next
        directive ('' for none), 6 next desired state.
  Returns: {'not_found'} | {'conflict'} | {'applied'}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(6)
local workerId = argId(1)
local change = argStateChange(2)
local key = K.worker .. workerId
local worker = redis.call('HMGET', key, 'state', 'directive', 'desired')
if not worker[1] then return { 'not_found' } end
if worker[1] ~= change.expectedState or (worker[2] or '') ~= change.expectedDirective then return { 'conflict' } end
applyStateChange(key, change)
if change.desired ~= worker[3] then signals[#signals + 1] = { k = 'd', w = workerId, s = change.desired } end
finish()
return { 'applied' }
