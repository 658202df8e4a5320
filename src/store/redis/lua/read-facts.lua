--[[
  read-facts (read only): the facts of the event log after a cursor (a fact
  position, domain event-facts.ts), oldest first, with the positions of the
  log's oldest fact and of the last one it numbered (a reader behind the
  oldest missed facts retention removed; a follower starting "from now"
  starts after the last).
  ARGV: 1 after (a position, exclusive; '' for the log's start), 2 limit.
  Returns: {oldest position ('' for an empty log), last position ('0' when
           the log never numbered a fact), {{entry id, {field, value...}}...},
           1 when those entries run to the end of the log (0 when more
           follow)}. The entries are those holding the facts after `after`
           (fact-codec.ts), the first perhaps holding some at or before it
           too, as many as hold `limit` facts when the log has them.
  Bounded: at most `limit` entries besides the oldest and the one holding `after`.
]]
argCount(2)
local after = argOptionalInt(1, 0, 2 ^ 53)
local limit = argCountOf(2)
local first = redis.call('XRANGE', K.events, '-', '+', 'COUNT', 1)[1]
local oldest = first and int(entrySpan(first[1]) or 0) or ''
local newest = redis.call('GET', K.eventPosition) or '0'
local entries = {}
local isEnd = true
if limit > 0 then
  local facts = 0
  local from = '-'
  if after then
    -- The entry holding `after` (the last that starts at or before it) may hold later facts too.
    local holder = redis.call('XREVRANGE', K.events, '(' .. int(after + 1) .. '-0', '-', 'COUNT', 1)[1]
    local position, count
    if holder then position, count = entrySpan(holder[1]) end
    if position and position + count - 1 > after then
      entries[1] = holder
      facts = position + count - 1 - after
    end
    from = int(after + 1) .. '-0'
  end
  while facts < limit do
    local wanted = math.min(limit - facts, 100)
    local page = redis.call('XRANGE', K.events, from, '+', 'COUNT', wanted)
    for _, entry in ipairs(page) do
      entries[#entries + 1] = entry
      local _, count = entrySpan(entry[1])
      facts = facts + math.max(1, count or 1)
      from = '(' .. entry[1]
    end
    isEnd = #page < wanted
    if isEnd then break end
  end
  if not isEnd then isEnd = #redis.call('XRANGE', K.events, from, '+', 'COUNT', 1) == 0 end
end
return { oldest, newest, entries, isEnd and 1 or 0 }
