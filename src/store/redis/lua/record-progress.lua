--[[
  record-progress: progress and a checkpoint for a held active job
  (ojs-progress), which also shows the worker holds it (timeouts.md 9.3).
  Pre:  the worker holds the job's current lease; otherwise nothing changes
        (ojs-progress: updates for jobs no longer active are ignored).
  Post: progress (already clamped to 0..1) never below what this attempt
        reported before; progress data and the checkpoint replaced when given;
        the lease renewed from now and confirmed (domain confirmedLease); a
        progress fact recorded (with the progress when the report had one).
  ARGV: 1 now, 2 worker id, 3 job id, 4 lease token, 5 progress ('' for
        none), 6 progress data JSON ('' for none), 7 checkpoint JSON ('' for none).
  Returns: {'ok', lease expires at} | {'ignored'}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(7)
local now = argNow(1)
local workerId = argId(2)
local id = argId(3)
local token = argId(4)
local progress = argText(5) ~= '' and argNumber(5, 0, 1) or nil
local data = argText(6)
local checkpoint = argText(7)

local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'leaseWorker', 'leaseToken', 'attempt', 'progress', 'progressAttempt', 'type', 'queue', 'tp')
if not job[1] or leaseProblem(job[1], job[2], job[3], workerId, token) then return { 'ignored' } end
local sameAttempt = job[6] == job[4]
local fields = {}
if progress then
  if sameAttempt and job[5] then progress = math.max(progress, tonumber(job[5])) end
  fields = { 'progress', progress }
end
if data ~= '' then
  fields[#fields + 1] = 'progressData'
  fields[#fields + 1] = data
elseif not sameAttempt then
  redis.call('HDEL', key, 'progressData')
end
if not sameAttempt and not progress then redis.call('HDEL', key, 'progress') end
if checkpoint ~= '' then
  fields[#fields + 1] = 'checkpoint'
  fields[#fields + 1] = checkpoint
end
fields[#fields + 1] = 'progressAttempt'
fields[#fields + 1] = job[4]
redis.call('HSET', key, unpack(fields))
local expiresAt = renewLease(id, now)
progressFact(id, { type = job[7], queue = job[8], attempt = job[4], tp = job[9] }, workerId, progress, now)
finish()
return { 'ok', int(expiresAt) }
