--[[
  list-schedules (read only): one page of the schedules, in name order.
  ARGV: 1 after (the last name of the previous page; '' for the first
        page), 2 limit.
  Returns: {{schedule hash...}, next after ('' when none follows)}.
  Bounded: reads `limit` + 1 names and `limit` hashes.
]]
argCount(2)
local after = argText(1)
local limit = argInt(2, 1, MAX_PAGE_SIZE)
local from = after == '' and '-' or '(' .. after
local names = redis.call('ZRANGEBYLEX', K.schedules, from, '+', 'LIMIT', 0, limit + 1)
local page = {}
for i = 1, math.min(limit, #names) do
  page[#page + 1] = scheduleHash(names[i])
end
return { page, #names > limit and names[limit] or '' }
