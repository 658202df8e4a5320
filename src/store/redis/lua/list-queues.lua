--[[
  list-queues (read only): one page of the queues that hold jobs, in name
  order, with their job counts per state.
  ARGV: 1 after (the last queue of the previous page; '' for the first
        page), 2 limit.
  Returns: {{{queue, {state, count...}}...}, next after ('' when no queue
           follows)}.
  Bounded: reads `limit` + 1 index entries and `limit` counts hashes.
]]
argCount(2)
local after = argText(1)
local limit = argInt(2, 1, MAX_PAGE_SIZE)
local from = after == '' and '-' or '(' .. after
local names = redis.call('ZRANGEBYLEX', K.queues, from, '+', 'LIMIT', 0, limit + 1)
local page = {}
for i = 1, math.min(limit, #names) do
  page[#page + 1] = { names[i], redis.call('HGETALL', K.counts .. names[i]) }
end
return { page, #names > limit and names[limit] or '' }
