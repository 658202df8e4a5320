--[[
  get-jobs (read only): jobs by id, in order.
  ARGV: 1 id count, 2 stride (1), 3.. job ids.
  Returns: {job hash ({} for an unknown id)...}.
  Bounded: reads the listed jobs only.
]]
local n, first = argBatch(1, 1)
local jobs = {}
for i = first, first + n - 1 do jobs[#jobs + 1] = redis.call('HGETALL', K.job .. argId(i)) end
return jobs
