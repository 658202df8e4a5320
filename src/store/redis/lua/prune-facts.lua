--[[
  prune-facts: drops the facts of the event log older than its retention age
  (its length is bounded as facts are appended: lib appendFacts).
  Pre:  none.
  Post: the entries recorded before `now - max age` are gone, in whole
        stream nodes (approximate trimming: a few older ones may stay until
        a later pass). An entry's time is its first fact's (one script call
        recorded them all, at one time); the log is in recording order, so
        the first entry young enough is found by bisecting positions, reading
        one entry per step. An entry the store did not write has no time: it
        goes with the old ones.
  ARGV: 1 now, 2 max age (ms).
  Returns: how many facts were dropped (by position: the oldest position
           held before, against the one held after).
  Bounded: reads about log2(positions held) entries; Redis stops an
  approximate trim after 100 stream nodes.
]]
argCount(2)
local now = argNow(1)
local maxAge = argTime(2)
local cutoff = now - maxAge

-- The time an entry was recorded at (0 for an entry not ours).
local function timeOf(entry)
  local facts = entry[2][2] or ''
  return tonumber(string.match(facts, '^%a' .. FIELD_SEPARATOR .. '(%d+)')) or 0
end

-- The first entry holding facts at or after `position`, if any.
local function entryFrom(position)
  return redis.call('XRANGE', K.events, int(position) .. '-0', '+', 'COUNT', 1)[1]
end

local oldest = redis.call('XRANGE', K.events, '-', '+', 'COUNT', 1)[1]
if not oldest or timeOf(oldest) >= cutoff then return 0 end
local before = entrySpan(oldest[1])
local newest = tonumber(redis.call('GET', K.eventPosition) or before)
-- Every entry starting before `low` is old; the first entry starting at or after `high` is young, or there is none.
local low, high = before + 1, math.max(before + 1, newest + 1)
while low < high do
  local mid = math.floor((low + high) / 2)
  local entry = entryFrom(mid)
  if entry and timeOf(entry) < cutoff then
    low = entrySpan(entry[1]) + 1
  else
    high = mid
  end
end
local young = entryFrom(high)
redis.call('XTRIM', K.events, 'MINID', '~', young and young[1] or int(newest + 1) .. '-0')
local remaining = redis.call('XRANGE', K.events, '-', '+', 'COUNT', 1)[1]
return math.max(0, (remaining and entrySpan(remaining[1]) or newest + 1) - before)
