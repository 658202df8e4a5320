--[[
  cancel-workflow: a pending or running workflow -> cancelled, with every
  job of it that has not settled (store cancelWorkflow; domain cancelWorkflow).
  Pre:  the workflow exists and has not ended.
  Post: every unsettled node is cancelled and the workflow with it; the
        jobs of the job nodes among them are cancelled (lib cancelJob,
        reason workflow, with the actor): waiting and pending
        ones, and active ones, whose leases are released and whose workers
        are told (jobsCancelled). Their cancellations settle nothing more.
        The workflow's facts, then the jobs', are recorded.
  ARGV: 1 now, 2 workflow id, 3 actor ('' for none).
  Returns: {'ok', {transition...}, workflow record (lib/workflows.lua Workflow.record)} |
           {'not_found', ''} | {'invalid_state', its state}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(3)
local now = argNow(1)
local id = argId(2)
local actor = argOptional(3)
local advance, problem, state = workflowCancel(id, now)
if not advance then return { problem, state or '' } end
local transitions = Workflow.apply(advance.run, advance, now, nil, actor)
finish()
return { 'ok', transitions, Workflow.record(id) }
