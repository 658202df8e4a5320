--[[
  list-workers (read only): one page of workers in id order, optionally
  filtered by a label or a queue (store port listWorkers).
  Pre:  without a filter, `limit` workers are examined; with one, at most
        `scan budget`, so that a page whose workers mostly do not match
        still costs a bounded amount: it may hold fewer than `limit` workers
        and still have a next one.
  ARGV: 1 after (the last id of the previous page; '' for the first page),
        2 limit, 3 scan budget, 4 has label filter (0/1), 5 label, 6 has
        queue filter (0/1), 7 queue.
  Returns: {{{worker hash, {held job id...}}...}, next after ('' when no
           worker follows the ones examined)}.
  Bounded: reads at most one worker id past those it examines.
]]
argCount(7)
local after = argText(1)
local limit = argInt(2, 1, MAX_PAGE_SIZE)
local budget = argInt(3, 1, MAX_COUNT)
local label = argFlag(4) and argId(5) or nil
local queue = argFlag(6) and argId(7) or nil
local isFiltered = label ~= nil or queue ~= nil
if not isFiltered then budget = limit end

local function contains(list, value)
  for _, member in ipairs(list) do
    if member == value then return true end
  end
  return false
end

-- Whether the worker passes the filter (a worker that is gone passes none).
local function matches(id)
  if not isFiltered then return true end
  local registration = redis.call('HGET', K.worker .. id, 'registration')
  if not registration then return false end
  registration = cjson.decode(registration)
  return (not label or contains(registration.labels, label)) and (not queue or contains(registration.queues, queue))
end

local from = after == '' and '-' or '(' .. after
local ids = redis.call('ZRANGEBYLEX', K.workerIds, from, '+', 'LIMIT', 0, budget + 1)
local items = {}
for examined, id in ipairs(ids) do
  if #items >= limit or examined > budget then return { items, ids[examined - 1] } end
  local snapshot = matches(id) and workerSnapshot(id)
  if snapshot then items[#items + 1] = snapshot end
end
return { items, '' }
