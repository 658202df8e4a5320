--[[
  find-silent-workers (read only): workers whose last beat is older than a
  cutoff, with the jobs they hold, those silent longest first.
  ARGV: 1 cutoff (last beat strictly before it), 2 limit.
  Returns: {{worker hash, {held job id...}}...}, at most `limit`.
  Bounded: at most `limit` index entries.
]]
argCount(2)
-- A cutoff is now minus a timeout: before the epoch under a clock that starts near it.
local cutoff = argInt(1, -MAX_TIME_MS, MAX_TIME_MS)
local limit = argCountOf(2)
local workers = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.workers, '-inf', '(' .. int(cutoff), 'LIMIT', 0, limit)) do
  local snapshot = workerSnapshot(id)
  if snapshot then workers[#workers + 1] = snapshot end
end
return workers
