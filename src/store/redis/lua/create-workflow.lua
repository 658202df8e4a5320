--[[
  create-workflow: stores a workflow, its plan, its run and its jobs, all
  or none (store createWorkflow).
  Pre:  neither the workflow nor any of its jobs exists, and no job id is
        repeated; otherwise nothing is written.
  Post: the plan and run hashes (workflow-codec.ts; lib/workflows.lua
        lists their fields) are written, and each job is stored as enqueue
        stores it (lib storeNewJob), with its workflow link: available for
        the nodes without dependencies, pending for the others.
        workflow.created is recorded, then the jobs' enqueueing.
  ARGV: 1 now, 2 workflow id, 3 plan value count (fields and values), then
        the plan hash's fields and values, then the run value count and the
        run hash's fields and values, then the job count and each job's head
        and hash (lib/new-jobs.lua).
  Returns: {'ok'} | {'duplicate', job id} | {'duplicate_workflow', workflow id}.
  Atomic: one script; every argument is checked before the first write.
]]
local now = argNow(1)
local id = argId(2)
-- A hash's field, value pairs: the argument at `at` holds their count, and they follow it.
local function argHash(at)
  local count = argCountOf(at)
  if count == 0 or count % 2 ~= 0 then refuse(at, 'is not a count of field, value pairs') end
  local values = {}
  for i = at + 1, at + count do values[#values + 1] = argText(i) end
  return values, at + count + 1
end
local plan, runAt = argHash(3)
local run, jobsAt = argHash(runAt)
local jobs, taken = argNewJobs(jobsAt)
if not jobs then return { 'duplicate', taken } end
if redis.call('EXISTS', K.workflow .. id, K.workflowPlan .. id) > 0 then return { 'duplicate_workflow', id } end

-- Field and value pairs, 2,000 at a time.
for _, hash in ipairs({ { K.workflowPlan .. id, plan }, { K.workflow .. id, run } }) do
  for i = 1, #hash[2], 4000 do redis.call('HSET', hash[1], unpack(hash[2], i, math.min(i + 3999, #hash[2]))) end
end
if isLogging() then Workflow.fact(WorkflowRun.open(id), 'created', now) end
local seenQueues = {}
for _, job in ipairs(jobs) do storeNewJob(job, now, seenQueues) end
finish()
return { 'ok' }
