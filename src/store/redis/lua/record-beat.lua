--[[
  record-beat: workers' heartbeats, each with the state change the domain
  decided for it, applied one after the other as separate calls would (a
  worker's second beat in a batch sees its first).
  Pre:  for each beat: the worker exists; the beat is not late (sequence 0,
        or above the last one); the worker's state and directive are still
        those the decision was made from (compare-and-set). A beat that
        fails its precondition changes nothing and the others still apply.
  Post: for each applied beat: last beat, sequence, reported jobs and the
        decided state, directive and desired state are stored; every listed
        job the worker holds has its lease renewed from now and confirmed
        (domain confirmedLease); a changed desired state is signalled.
        Listed jobs to stop are those the store port's BeatOutcome describes
        (timed out, reclaimed). A changed worker state records its fact;
        every applied beat publishes a heartbeat notice (its state, and each
        renewed lease with its new expiry), live only: never stored; the
        call's notices go in one message.
  ARGV: 1 beat count (1 to MAX_BEATS), then each beat: now, worker id,
        sequence, a state change (lib argStateChange: expected state,
        expected directive ('' for none), next state, next directive, next
        desired state), reported job ids as JSON, listed job count, then
        the listed job ids. The beats end the arguments.
  Returns: five elements per beat, in order, flat: status (applied,
           not_found, stale or conflict), the worker's desired state ('' when
           not found), then the applied beat's cancelled, timed-out and
           reclaimed job ids, each list joined by FIELD_SEPARATOR ('' for
           none; ids are visible ASCII). Flat: Redis turns each table of a
           reply into an array after seven lookups, and a beat's reply of
           four tables cost it more than the beat's own commands.
  Bounded: at most MAX_BEATS beats, each reading its listed jobs only.
  Atomic: one script; every argument of every beat is checked before the
  first write.
]]
-- The store port's MAX_BEATS_PER_CALL (job-store.ts): redis-store-integrity.test.ts checks the two agree.
local MAX_BEATS = 500
-- Fields of a beat before its listed job ids.
local BEAT_FIELDS = 10

local count = argInt(1, 1, MAX_BEATS)
-- Most beats list no job: they share this empty list (never written), and make no tables of their own for jobs.
local NONE = {}
local beats = {}
local at = 2
for b = 1, count do
  -- Now and the sequence also as they came, checked: written as text, Redis formats no number.
  local beat = {
    now = argNow(at), nowText = argText(at), workerId = argId(at + 1), sequence = argInt(at + 2, 0, 2 ^ 53), sequenceText = argText(at + 2),
    change = argStateChange(at + 3), reported = argId(at + 8), listed = NONE,
  }
  local n = argInt(at + 9, 0, MAX_CONCURRENCY)
  if n > 0 then beat.listed = {} end
  for i = at + BEAT_FIELDS, at + BEAT_FIELDS + n - 1 do beat.listed[#beat.listed + 1] = argId(i) end
  beats[b] = beat
  at = at + BEAT_FIELDS + n
end
if at - 1 ~= ownArgCount() then
  error({ err = 'BADARG ' .. count .. ' beats end at argument ' .. (at - 1) .. ', not at the last one, ' .. ownArgCount() })
end

-- The replies, five elements per beat (see Returns).
local replies = {}
local function reply(status, desired, cancelled, timedOut, reclaimed)
  local r = #replies
  replies[r + 1], replies[r + 2], replies[r + 3], replies[r + 4], replies[r + 5] = status, desired, cancelled, timedOut, reclaimed
end

-- Job ids as one reply element.
local function joined(ids)
  return #ids == 0 and '' or table.concat(ids, FIELD_SEPARATOR)
end

local function recordBeat(beat)
  local now, workerId, sequence, change = beat.now, beat.workerId, beat.sequence, beat.change
  local key = K.worker .. workerId
  local worker = redis.call('HMGET', key, 'state', 'directive', 'desired', 'lastSequence')
  if not worker[1] then return reply('not_found', '', '', '', '') end
  if sequence ~= 0 and sequence <= tonumber(worker[4]) then return reply('stale', worker[3], '', '', '') end
  if worker[1] ~= change.expectedState or (worker[2] or '') ~= change.expectedDirective then
    return reply('conflict', worker[3], '', '', '')
  end

  local fields = { 'lastBeatAt', beat.nowText, 'reportedJobIds', beat.reported }
  if sequence ~= 0 then
    fields[#fields + 1] = 'lastSequence'
    fields[#fields + 1] = beat.sequenceText
  end
  applyStateChange(key, change, fields)
  zadd(K.workers, beat.nowText, workerId)

  local cancelled, timedOut, reclaimed, renewed = NONE, NONE, NONE, NONE
  if #beat.listed > 0 then cancelled, timedOut, reclaimed, renewed = {}, {}, {}, {} end
  for _, id in ipairs(beat.listed) do
    local job = redis.call('HMGET', K.job .. id, 'state', 'leaseWorker', 'startedAt', 'tmo', 'totalAt', 'type', 'queue', 'attempt')
    if job[1] == 'active' and job[2] == workerId then
      renewed[#renewed + 1] = renewedLease(id, { type = job[6], queue = job[7], attempt = job[8] }, renewLease(id, now))
      if softTimeoutAt(job[3], job[4], job[5]) <= now then timedOut[#timedOut + 1] = id end
    elseif job[1] == 'cancelled' then
      cancelled[#cancelled + 1] = id
    elseif job[1] and job[1] ~= 'completed' then
      reclaimed[#reclaimed + 1] = id
    end
  end
  if change.desired ~= worker[3] then signals[#signals + 1] = { k = 'd', w = workerId, s = change.desired } end
  if change.nextState ~= worker[1] then workerFact(workerId, worker[1], change.nextState, now, { activeJobs = #beat.listed }) end
  publishHeartbeat(workerId, beat.nowText, change.nextState, renewed)
  reply('applied', change.desired, joined(cancelled), joined(timedOut), joined(reclaimed))
end

for _, beat in ipairs(beats) do recordBeat(beat) end
finish()
return replies
