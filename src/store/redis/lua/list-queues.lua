--[[
  list-queues (read only): one page of the queues that hold jobs or are
  paused, in name order, with their job counts per state, whether they are
  paused, and their oldest available job.
  ARGV: 1 after (the last queue of the previous page; '' for the first
        page), 2 limit.
  Returns: {{{queue, {state, count...}, paused (0/1), enqueue time of its
           oldest available job ('' for none)}...}, next after ('' when no
           queue follows)}.
  Bounded: reads `limit` + 1 index entries, and per queue of the page its
  counts hash, its pause and one listing entry.
]]
argCount(2)
local after = argText(1)
local limit = argInt(2, 1, MAX_PAGE_SIZE)
local from = after == '' and '-' or '(' .. after
local names = redis.call('ZRANGEBYLEX', K.queues, from, '+', 'LIMIT', 0, limit + 1)
local page = {}
for i = 1, math.min(limit, #names) do
  page[#page + 1] = queueSummary(names[i])
end
return { page, #names > limit and names[limit] or '' }
