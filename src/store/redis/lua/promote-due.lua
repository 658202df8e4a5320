--[[
  promote-due: scheduled | retryable -> available when their time comes, and
  scheduled | available | pending | retryable -> discarded past expires_at.
  Pre:  for promotion, the job's scheduled_at or next_retry_at is <= now; for
        expiry, the job is still waiting and its expires_at is <= now.
  Post: promoted jobs are in their ready queue; expired ones are discarded
        with an error of type "expired" appended to their history.
  ARGV: 1 now, 2 limit (jobs changed at most), 3 message of the expiry error.
  Returns: {transition...}.
  Bounded: both index scans take at most `limit` entries.
]]
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local transitions = {}

for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.due, '-inf', now, 'LIMIT', 0, limit)) do
  zrem(K.due, id)
  local job = redis.call('HMGET', K.job .. id, 'state', 'scheduledAt', 'nextRetryAt', 'queue', 'type', 'attempt')
  local dueAt = (job[1] == 'scheduled' and job[2]) or (job[1] == 'retryable' and job[3])
  if dueAt and tonumber(dueAt) <= now then
    enter(id, { queue = job[4] }, job[1], 'available', ARGV[1])
    transitions[#transitions + 1] = transition(id, job[1], 'available', nil, { job[5], job[4], job[6] })
  end
end
-- The expiry scan below must see the entries the promotions just added.
flush()

local room = limit - #transitions
if room > 0 then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.expiries, '-inf', now, 'LIMIT', 0, room)) do
    zrem(K.expiries, id)
    local key = K.job .. id
    local job = redis.call('HMGET', key, 'state', 'expiresAt', 'queue', 'attempt', 'errors', 'type')
    if WAITING[job[1]] and job[2] and tonumber(job[2]) <= now then
      local err = cjson.encode({ type = 'expired', message = ARGV[3], attempt = tonumber(job[4] or 0), occurredAt = now })
      local history = job[5] or '[]'
      history = (history == '[]') and ('[' .. err .. ']') or (string.sub(history, 1, -2) .. ',' .. err .. ']')
      unindex(id, job[3])
      enter(id, { queue = job[3] }, job[1], 'discarded', ARGV[1], { 'error', err, 'errors', history })
      transitions[#transitions + 1] = transition(id, job[1], 'discarded', nil, { job[6], job[3], job[4] })
    end
  end
end
finish()
return transitions
