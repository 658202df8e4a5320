--[[
  delete-jobs: removes finished jobs for good, each checked and applied on
  its own (no transition: nothing is recorded, as for pruning).
  Pre:  per item, the job exists and is finished (domain.lua TERMINAL);
        other items are refused one by one.
  Post: the job hash and its listing entries (the only index entries a
        finished job has; the others are cleared too, should one have been
        left behind) are deleted, its queue's counts decremented; a
        queue left without jobs loses its counts and, unless it is paused,
        its entry in the queue index (lib flush).
  ARGV: 1 job count, 2 stride (1), 3.. job ids.
  Returns: {{status, state}...} in item order, where status is ok, not_found
           or invalid_state, and state the job's state (before deletion).
  Bounded: the caller sends at most 1,000 ids. Atomic: one script; every
  argument is checked before the first write.
]]
local n, first = argBatch(1, 1)
local ids = {}
for i = first, first + n - 1 do ids[#ids + 1] = argId(i) end

local results = {}
for _, id in ipairs(ids) do
  local key = K.job .. id
  local job = redis.call('HMGET', key, 'state', 'queue', 'createdAt', 'completedAt')
  if not job[1] then
    results[#results + 1] = { 'not_found', '' }
  elseif not TERMINAL[job[1]] then
    results[#results + 1] = { 'invalid_state', job[1] }
  else
    releaseUnique(id, nil)
    redis.call('DEL', key)
    relist(id, job[2], job[1], listingTime(job[1], job[3], nil, job[4]), false)
    -- Entries a finished job never keeps, in case one was left behind: nothing may name a deleted job.
    unindex(id, job[2])
    zrem(K.leases, id)
    zrem(K.timeouts, id)
    count(job[2], job[1], nil)
    results[#results + 1] = { 'ok', job[1] }
  end
end
finish()
return results
