--[[
  record-progress: progress and a checkpoint for a held active job
  (ojs-progress), which also shows the worker holds it (timeouts.md 9.3).
  Pre:  the worker holds the job's current lease; otherwise nothing changes
        (ojs-progress: updates for jobs no longer active are ignored).
  Post: progress (already clamped to 0..1) never below what this attempt
        reported before; progress data and the checkpoint replaced when given;
        the lease renewed from now and confirmed (domain confirmedLease).
  ARGV: 1 now, 2 worker id, 3 job id, 4 lease token, 5 progress ('' for
        none), 6 progress data JSON ('' for none), 7 checkpoint JSON ('' for none).
  Returns: {'ok', lease expires at} | {'ignored'}.
]]
local id = ARGV[3]
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'leaseToken', 'attempt', 'progress', 'progressAttempt')
if not job[1] or leaseProblem(job[1], job[2], job[3], ARGV[2], ARGV[4]) then return { 'ignored' } end
local sameAttempt = job[6] == job[4]
local fields = {}
if ARGV[5] ~= '' then
  local progress = tonumber(ARGV[5])
  if sameAttempt and job[5] then progress = math.max(progress, tonumber(job[5])) end
  fields = { 'progress', progress }
end
if ARGV[6] ~= '' then
  fields[#fields + 1] = 'progressData'
  fields[#fields + 1] = ARGV[6]
elseif not sameAttempt then
  redis.call('HDEL', key, 'progressData')
end
if not sameAttempt and ARGV[5] == '' then redis.call('HDEL', key, 'progress') end
if ARGV[7] ~= '' then
  fields[#fields + 1] = 'checkpoint'
  fields[#fields + 1] = ARGV[7]
end
fields[#fields + 1] = 'progressAttempt'
fields[#fields + 1] = job[4]
redis.call('HSET', key, unpack(fields))
local expiresAt = renewLease(id, ARGV[1])
finish()
return { 'ok', int(expiresAt) }
