--[[
  read-workers (read only): workers with the ids of the jobs they hold.
  ARGV: 1 mode: "one" (2 worker id), "all", or "silent" (2 cutoff: last beat
        strictly before it, 3 limit).
  Returns: {{worker hash, {held job id...}}...}.
]]
local ids
if ARGV[1] == 'one' then
  ids = { ARGV[2] }
elseif ARGV[1] == 'all' then
  ids = redis.call('ZRANGE', K.workers, 0, -1)
else
  ids = redis.call('ZRANGEBYSCORE', K.workers, '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
end
local workers = {}
for _, id in ipairs(ids) do
  local fields = redis.call('HGETALL', K.worker .. id)
  if #fields > 0 then workers[#workers + 1] = { fields, redis.call('SMEMBERS', K.held .. id) } end
end
return workers
