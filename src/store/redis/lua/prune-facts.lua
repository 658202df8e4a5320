--[[
  prune-facts: drops the facts of the event log older than its retention age
  (its length is bounded as facts are appended: lib appendFacts).
  Pre:  none.
  Post: facts older than `now - max age` are gone, in whole stream nodes
        (approximate trimming: a few older ones may stay until the next pass).
  ARGV: 1 now, 2 max age (ms).
  Returns: how many facts were dropped.
  Bounded: Redis stops an approximate trim after 100 stream nodes.
]]
argCount(2)
local now = argNow(1)
local maxAge = argTime(2)
local cutoff = math.max(0, now - maxAge)
return redis.call('XTRIM', K.events, 'MINID', '~', int(cutoff))
