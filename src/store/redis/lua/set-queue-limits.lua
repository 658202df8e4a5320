--[[
  set-queue-limits: sets or clears a queue's fleet-wide limits (domain
  queue-limits.ts), which claim.lua obeys for every replica.
  Pre:  none.
  Post: the limits hash holds the queue's limits iff any is set; its start
        log goes with its rate (and is kept while it has one, so that a
        lowered rate counts the starts already made); its rate-limit event
        sampling goes with its limits, and clearing them while an episode
        is open records rate_limit.released (naming no job; domain
        rate-limit-events.ts); unless the queue is
        paused, jobsAvailable is signalled with its available count, so
        that waiting Fetch streams claim under the new limits at once.
  ARGV: 1 queue, 2 max active ('' for none), 3 rate limit ('' for none),
        4 rate period in ms ('' exactly when there is no rate limit), 5 now.
  Returns: 1.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(5)
local queue = argId(1)
local maxActive = argOptionalInt(2, 0, MAX_ACTIVE_LIMIT)
local rate = argOptionalInt(3, 1, MAX_RATE_LIMIT)
local period = argOptionalInt(4, MIN_RATE_PERIOD_MS, MAX_RATE_PERIOD_MS)
local now = argNow(5)
if (rate == nil) ~= (period == nil) then refuse(4, 'a rate needs both its limit and its period') end
if maxActive == nil and rate == nil then
  redis.call('HDEL', K.limits, queue)
  local sampling = K.rateLimitEvents .. queue
  local held = redis.call('HGET', sampling, 'held')
  if held then rateLimitFact(queue, 'released', held, now, nil, nil, nil) end
  redis.call('DEL', sampling)
else
  redis.call('HSET', K.limits, queue, (maxActive and int(maxActive) or '') .. ',' .. (rate and int(rate) or '') .. ',' .. (period and int(period) or ''))
end
if rate == nil then redis.call('DEL', K.starts .. queue) end
if redis.call('SISMEMBER', K.paused, queue) == 0 then
  local waiting = tonumber(redis.call('HGET', K.counts .. queue, 'available') or 0)
  if waiting > 0 then available[queue] = waiting end
end
finish()
return 1
