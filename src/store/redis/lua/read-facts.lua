--[[
  read-facts (read only): one page of the event log after a cursor, oldest
  first, with the cursors of the log's oldest and newest facts (a reader
  behind the oldest missed facts retention removed; a follower starting
  "from now" starts after the newest).
  ARGV: 1 after (a cursor, exclusive; '' for the log's start), 2 limit.
  Returns: {oldest cursor ('' for an empty log), newest cursor ('0-0' for
           an empty log), {{cursor, {field, value...}}...}} (fact-codec.ts).
  Bounded: at most `limit` facts, plus the first and the last.
]]
argCount(2)
local after = argText(1)
local limit = argCountOf(2)
local oldest = redis.call('XRANGE', K.events, '-', '+', 'COUNT', 1)[1]
local newest = redis.call('XREVRANGE', K.events, '+', '-', 'COUNT', 1)[1]
local page = {}
if limit > 0 then page = redis.call('XRANGE', K.events, after == '' and '-' or '(' .. after, '+', 'COUNT', limit) end
return { oldest and oldest[1] or '', newest and newest[1] or '0-0', page }
