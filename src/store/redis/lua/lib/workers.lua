--[[
  Worker helpers several scripts share, built on lib/ojs.lua: reading a
  worker with its held jobs, and compare-and-set changes of its state.
]]

--[[ Reading workers ]]

-- A worker as reads return it: {worker hash, {held job id...}}, or nil when it is not registered.
local function workerSnapshot(workerId)
  local fields = redis.call('HGETALL', K.worker .. workerId)
  if #fields == 0 then return nil end
  return { fields, redis.call('SMEMBERS', K.held .. workerId) }
end

--[[ Worker state changes (record-beat, direct-worker) ]]

--[[
  Reads the compare-and-set of a worker's state whose first field is
  ARGV[at] (scripts/state-change.ts): expected state, expected directive
  ('' for none), next state, next directive ('' for none), next desired state.
]]
local function argStateChange(at)
  local change = {
    expectedState = argMember(at, WORKER_STATES), expectedDirective = argText(at + 1), nextState = argMember(at + 2, WORKER_STATES),
    nextDirective = argText(at + 3), desired = argMember(at + 4, WORKER_STATES),
  }
  if change.expectedDirective ~= '' then argMember(at + 1, WORKER_STATES) end
  if change.nextDirective ~= '' then argMember(at + 3, WORKER_STATES) end
  return change
end

--[[
  Stores the decided state, directive and desired state, with `fields`
  (more field/value pairs) in the same HSET. The caller found the worker's
  directive to be the expected one (compare-and-set): none expected and
  none decided (every beat of a running worker) deletes nothing.
]]
local function applyStateChange(key, change, fields)
  fields = fields or {}
  local n = #fields
  fields[n + 1], fields[n + 2], fields[n + 3], fields[n + 4] = 'state', change.nextState, 'desired', change.desired
  if change.nextDirective == '' then
    if change.expectedDirective ~= '' then redis.call('HDEL', key, 'directive') end
  else
    fields[#fields + 1] = 'directive'
    fields[#fields + 1] = change.nextDirective
  end
  redis.call('HSET', key, unpack(fields))
end
