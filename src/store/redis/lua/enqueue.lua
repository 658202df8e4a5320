--[[
  enqueue: (none) -> scheduled | available | pending, for a batch of jobs.
  Pre:  every argument is valid; no id of the batch is taken, nor repeated
        within it; no job's unique policy says reject for a duplicate (all or
        none are stored).
  Post: each job hash is written and indexed by its state (ready queue, or
        due time and listing indexes) and its waiting deadline; per-queue
        counters and the queue index are updated; one jobsAvailable signal
        per queue; one fact per job (none -> its state, with its priority and
        scheduled time) when the log is on. A job with a unique policy holds
        its uniqueness key (expiring with its period); a duplicate under
        ignore stores nothing and answers with the existing job; under
        replace the existing job is cancelled first (reason "replaced") if
        it has not finished. Jobs are decided in batch order, an earlier job
        of the batch holding its key for the later ones (lib/new-jobs.lua).
  ARGV: 1 now, 2 job count, then each job's head and hash (lib/new-jobs.lua).
  Returns: {'ok', per job 'stored' | {'existing', job hash} | {'replaced', transition}}
         | {'duplicate', id} | {'unique', job index, holder id, holder state, key}.
  Atomic: the script runs alone, and every key shares the prefix's hash slot;
  every argument is checked, and every duplicate found, before the first write.
]]
local now = argNow(1)
local jobs, taken = argNewJobs(2)
if not jobs then return { 'duplicate', taken } end
local refusal = decideUnique(jobs, now)
if refusal then return refusal end
local outcomes = storeNewJobs(jobs, now)
finish()
return { 'ok', outcomes }
