--[[
  set-queue-paused: pauses or resumes a queue for every replica (a paused
  queue takes enqueues and delivers nothing: claim skips it).
  Pre:  none; asking for the state the queue is in changes nothing.
  Post: the queue is in the paused set iff paused; the queue index lists it
        while it is paused or holds jobs; a change records its fact, and a
        resume signals jobsAvailable with the queue's available count, so
        that waiting Fetch streams claim at once.
  ARGV: 1 now, 2 queue, 3 paused (0/1), 4 actor ('' for none).
  Returns: 1 when the pause changed, 0 when the queue already was as asked.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(4)
local now = argNow(1)
local queue = argId(2)
local paused = argFlag(3)
local actor = argOptional(4)
if paused then
  if redis.call('SADD', K.paused, queue) == 0 then return 0 end
  redis.call('ZADD', K.queues, 0, queue)
else
  if redis.call('SREM', K.paused, queue) == 0 then return 0 end
  local waiting = tonumber(redis.call('HGET', K.counts .. queue, 'available') or 0)
  if waiting > 0 then available[queue] = waiting end
  if redis.call('EXISTS', K.counts .. queue) == 0 then redis.call('ZREM', K.queues, queue) end
end
queueFact(queue, paused, actor, now)
finish()
return 1
