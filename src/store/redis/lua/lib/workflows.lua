--[[
  Workflows, built on lib/ojs.lua: advancing a workflow in the script that
  settles the job which advances it, so that the settlement and what follows
  it are one atomic step. The functions mirror src/domain/workflow-run.ts
  (startWorkflow, settleNode, cancelWorkflow) and parent-results.ts
  (assembleParentResults) step by step; test/contract/lua-workflows.test.ts
  runs both on random workflows and settlements and proves they agree.

  A workflow is two hashes (workflow-codec.ts writes and reads them in TypeScript):
  K.workflowPlan .. id, written once at creation:
    type, name, jobCount, nodeCount, templateCount, exits ("4,7")
    n<i>  node i as the rule reads it: "<rule>|<unfired>|<gate>|<template>|<key>|<dependents>"
          (gate and template -1 for none, dependents comma-separated)
    d<i>  node i as GetWorkflow shows it (JSON: path, role, type, dependencies): never read here
    j<i>  the id of job node i's job (i < jobCount)
    t<i>  parent_results template i: "<extends>", then each piece after a \31: literal
          JSON text, or "#<node>" for the node whose result goes there
    fname, tp  the name and the jobs' traceparent as facts hold them (fact-codec.ts factText; '' for none)
  K.workflow .. id, the run:
    state, createdAt, startedAt and completedAt (once set), completedCount, failedCount, settledCount,
    firstFailed (once a job node failed: the first)
    s<i>  node i: "<status>,<remaining>,<failedDependencies>"
    r<i>  the result (JSON text) of job node i's job, copied when the node succeeded with one:
          parent_results and GetWorkflow read it, whatever the job's own retention
  K.workflowEnded .. state: the workflows that ended in that state, by end time (pruneTerminal).
  Nodes are numbered from 0, as in the domain: job nodes first, then joins.

  Each function reads what it needs (through a cache, so it reads its own
  changes), decides in memory, and writes the run with one HSET at its end:
  a refusal (BADARG: a caller's bug; CORRUPT: data no script wrote) is
  raised before that write and leaves the data untouched. Loops are bounded
  by the plan's node and template counts.
]]

-- The run being changed (domain RunChange): one table of helpers, since a script may hold 200 locals in all.
local WorkflowRun = { NO_NODE = -1 }

function WorkflowRun.corrupt(id, problem)
  error({ err = 'CORRUPT workflow ' .. id .. ' ' .. problem })
end

-- HMGET of `fields`, in chunks that unpack keeps below Lua's limit. Missing fields are false.
function WorkflowRun.hmget(key, fields)
  local values = {}
  for first = 1, #fields, 1000 do
    local part = redis.call('HMGET', key, unpack(fields, first, math.min(first + 999, #fields)))
    for k = 1, #part do values[first + k - 1] = part[k] end
  end
  return values
end

-- The run of workflow `id`, ready to change; nil when there is no such workflow.
function WorkflowRun.open(id)
  local runKey, planKey = K.workflow .. id, K.workflowPlan .. id
  local f = redis.call('HMGET', runKey, 'state', 'completedCount', 'failedCount', 'settledCount', 'firstFailed', 'createdAt')
  if not f[1] then return nil end
  local p = redis.call('HMGET', planKey, 'jobCount', 'nodeCount', 'exits', 'type', 'fname', 'tp')
  if not (p[1] and p[2] and p[3]) then WorkflowRun.corrupt(id, 'has a run but no plan') end
  return {
    id = id, runKey = runKey, planKey = planKey, jobCount = tonumber(p[1]), nodeCount = tonumber(p[2]), exits = p[3],
    type = p[4], name = p[5] or '', tp = p[6] or '', createdAt = f[6],
    state = f[1], completed = tonumber(f[2]), failed = tonumber(f[3]), settled = tonumber(f[4]), firstFailed = f[5] and tonumber(f[5]),
    -- Per node read: its progress {status, remaining, failed} and its plan record.
    nodes = {}, records = {},
    changed = {}, enqueue = {}, withdrawn = {}, transitions = {},
  }
end

-- Reads the progress and plan record of the nodes of `list` not read yet: two HMGETs.
function WorkflowRun.load(run, list)
  local missing, seen = {}, {}
  for _, i in ipairs(list) do
    if not run.nodes[i] and not seen[i] then
      seen[i] = true
      missing[#missing + 1] = i
    end
  end
  if #missing == 0 then return end
  local progressFields, recordFields = {}, {}
  for k, i in ipairs(missing) do
    progressFields[k] = 's' .. i
    recordFields[k] = 'n' .. i
  end
  local progress = WorkflowRun.hmget(run.runKey, progressFields)
  local records = WorkflowRun.hmget(run.planKey, recordFields)
  for k, i in ipairs(missing) do
    local status, remaining, failed = string.match(progress[k] or '', '^(%a+),(%d+),(%d+)$')
    local rule, unfired, gate, template, key, dependents =
      string.match(records[k] or '', '^([%a_]+)|(%a+)|(%-?%d+)|(%-?%d+)|([^|]*)|([%d,]*)$')
    if not (status and rule) then WorkflowRun.corrupt(run.id, 'has no node ' .. i) end
    run.nodes[i] = { status = status, remaining = tonumber(remaining), failed = tonumber(failed) }
    run.records[i] = { rule = rule, unfired = unfired, gate = tonumber(gate), template = tonumber(template), key = key, dependents = dependents }
  end
end

-- The nodes that list node `i` among their dependencies (read).
function WorkflowRun.dependents(run, i)
  local list = {}
  for dependent in string.gmatch(run.records[i].dependents, '%d+') do list[#list + 1] = tonumber(dependent) end
  return list
end

-- Node `i` settles as `status` (domain RunChange.settle); a job that will never run now is withdrawn.
function WorkflowRun.settle(run, i, status)
  run.nodes[i].status = status
  run.changed[i] = true
  run.settled = run.settled + 1
  if i >= run.jobCount then return end
  if status == 'succeeded' then
    run.completed = run.completed + 1
  elseif status == 'failed' then
    run.failed = run.failed + 1
    run.firstFailed = run.firstFailed or i
  else
    run.withdrawn[#run.withdrawn + 1] = i
  end
end

--[[
  Node `i` has no unsettled dependency left (domain nodeDecision and
  RunChange.decide): a batch callback whose batch never started is
  cancelled; otherwise it runs when its rule holds for its failed
  dependencies, and settles as its unfired outcome says when not. A join
  that runs succeeds at once; a job node's job becomes available.
]]
function WorkflowRun.decide(run, i)
  local record, node = run.records[i], run.nodes[i]
  local decision
  if record.gate ~= WorkflowRun.NO_NODE then
    WorkflowRun.load(run, { record.gate })
    if NODE_FAILURE[run.nodes[record.gate].status] then decision = 'cancelled' end
  end
  if not decision then
    local failed = node.failed
    local holds = record.rule == 'all_settled' or (record.rule == 'all_succeeded' and failed == 0) or (record.rule ~= 'all_succeeded' and failed > 0)
    decision = holds and 'run' or record.unfired
  end
  if decision ~= 'run' then
    WorkflowRun.settle(run, i, decision)
  elseif i >= run.jobCount then
    WorkflowRun.settle(run, i, 'succeeded')
  else
    node.status = 'enqueued'
    run.changed[i] = true
    run.enqueue[#run.enqueue + 1] = i
  end
end

-- The workflow moves to `to` (domain RunChange.transition); the caller checked that the lifecycle allows it.
function WorkflowRun.transition(run, to, now)
  local from = run.state
  if not (NEXT_WORKFLOW_STATES[from] and NEXT_WORKFLOW_STATES[from][to]) then
    WorkflowRun.corrupt(run.id, "cannot go from '" .. tostring(from) .. "' to '" .. to .. "'")
  end
  run.state = to
  if to == 'running' then run.startedAt = now end
  if TERMINAL_WORKFLOW[to] then run.completedAt = now end
  run.transitions[#run.transitions + 1] = { from, to, text(now) }
end

-- The job ids of job nodes `list`, in order.
function WorkflowRun.jobIds(run, list)
  if #list == 0 then return {} end
  local fields = {}
  for k, i in ipairs(list) do fields[k] = 'j' .. i end
  local ids = WorkflowRun.hmget(run.planKey, fields)
  for k, id in ipairs(ids) do
    if not id then WorkflowRun.corrupt(run.id, 'has no job for node ' .. list[k]) end
  end
  return ids
end

--[[
  Writes what changed, in one HSET (none when nothing did), and returns the
  advance (domain WorkflowAdvance): { enqueue = {node...}, withdrawn =
  {node...}, changed = {node..., ascending}, transitions = {{from, to, at}...},
  enqueueJobs and withdrawnJobs = the job ids of enqueue and withdrawn,
  run = the run as changed }. The caller makes the enqueued jobs available
  and cancels the withdrawn ones (Workflow.apply). A result given to
  workflowSettle is copied (r<i>) when its node succeeded by this change.
]]
function WorkflowRun.finish(run)
  local changed = {}
  for i in pairs(run.changed) do changed[#changed + 1] = i end
  table.sort(changed)
  local advance = {
    enqueue = run.enqueue, withdrawn = run.withdrawn, changed = changed, transitions = run.transitions,
    enqueueJobs = WorkflowRun.jobIds(run, run.enqueue), withdrawnJobs = WorkflowRun.jobIds(run, run.withdrawn), run = run,
  }
  if #changed == 0 and #run.transitions == 0 then return advance end
  local fields = { 'state', run.state, 'completedCount', run.completed, 'failedCount', run.failed, 'settledCount', run.settled }
  if run.result and run.changed[run.result.node] and run.nodes[run.result.node].status == 'succeeded' then
    fields[#fields + 1] = 'r' .. run.result.node
    fields[#fields + 1] = run.result.json
  end
  if run.startedAt then
    fields[#fields + 1] = 'startedAt'
    fields[#fields + 1] = text(run.startedAt)
  end
  if run.completedAt then
    fields[#fields + 1] = 'completedAt'
    fields[#fields + 1] = text(run.completedAt)
  end
  if run.firstFailed then
    fields[#fields + 1] = 'firstFailed'
    fields[#fields + 1] = text(run.firstFailed)
  end
  for _, i in ipairs(changed) do
    local node = run.nodes[i]
    fields[#fields + 1] = 's' .. i
    fields[#fields + 1] = node.status .. ',' .. node.remaining .. ',' .. node.failed
  end
  -- Field and value pairs, 2,000 at a time.
  for first = 1, #fields, 4000 do
    redis.call('HSET', run.runKey, unpack(fields, first, math.min(first + 3999, #fields)))
  end
  return advance
end

--[[
  A job of workflow `id` began executing (domain startWorkflow): the first
  one makes the workflow running. Returns the advance (WorkflowRun.finish),
  or nil when there is no such workflow.
]]
local function workflowStart(id, now)
  local run = WorkflowRun.open(id)
  if not run then return nil end
  if run.state == 'pending' then WorkflowRun.transition(run, 'running', now) end
  return WorkflowRun.finish(run)
end

--[[
  The job of node `index` reached `outcome` ('succeeded', or 'failed': for
  good, after its retries or cancelled by an operator) for workflow `id`
  (domain settleNode): decides every node this settles, in dependency
  order, and ends the workflow when all nodes have settled. A node already
  settled changes nothing. `result` (the job's result JSON, nil for none)
  is copied to the run when this settles the node as succeeded. Returns
  the advance (WorkflowRun.finish), or nil when there is no such workflow.
  Refuses (BADARG) a node that is no job node, an unknown outcome, and a
  success of a node never enqueued.
]]
local function workflowSettle(id, index, outcome, now, result)
  local run = WorkflowRun.open(id)
  if not run then return nil end
  if result then run.result = { node = index, json = result } end
  if type(index) ~= 'number' or index % 1 ~= 0 or index < 0 or index >= run.jobCount then
    error({ err = 'BADARG workflow ' .. id .. ' has no job node ' .. tostring(index) })
  end
  if outcome ~= 'succeeded' and outcome ~= 'failed' then error({ err = 'BADARG ' .. tostring(outcome) .. ' is no node outcome' }) end
  WorkflowRun.load(run, { index })
  local node = run.nodes[index]
  if NODE_SETTLED[node.status] then return WorkflowRun.finish(run) end
  if node.status == 'waiting' and outcome == 'succeeded' then
    error({ err = 'BADARG node ' .. index .. ' of workflow ' .. id .. ' succeeded without being enqueued' })
  end
  if run.state == 'pending' then WorkflowRun.transition(run, 'running', now) end
  WorkflowRun.settle(run, index, outcome)
  -- A node failed while it waited tells its dependents only once its own dependencies have settled.
  -- Nodes settled on the way are appended, and visited by the same loop: each at most once.
  local toNotify = node.remaining == 0 and { index } or {}
  local k = 0
  while k < #toNotify do
    k = k + 1
    if k > run.nodeCount then WorkflowRun.corrupt(id, 'settles a node twice') end
    local next = toNotify[k]
    local failed = NODE_FAILURE[run.nodes[next].status] and 1 or 0
    local dependents = WorkflowRun.dependents(run, next)
    WorkflowRun.load(run, dependents)
    for _, dependent in ipairs(dependents) do
      local before = run.nodes[dependent]
      local remaining, status = before.remaining, before.status
      before.remaining = remaining - 1
      before.failed = before.failed + failed
      run.changed[dependent] = true
      if remaining == 1 then
        if status == 'waiting' then WorkflowRun.decide(run, dependent) end
        if NODE_SETTLED[before.status] then toNotify[#toNotify + 1] = dependent end
      end
    end
  end
  if run.settled == run.nodeCount then
    local isFailed = false
    local exits = {}
    for exit in string.gmatch(run.exits, '%d+') do exits[#exits + 1] = tonumber(exit) end
    WorkflowRun.load(run, exits)
    for _, exit in ipairs(exits) do isFailed = isFailed or NODE_FAILURE[run.nodes[exit].status] == true end
    WorkflowRun.transition(run, isFailed and 'failed' or 'completed', now)
  end
  return WorkflowRun.finish(run)
end

--[[
  Cancels workflow `id` and every node of it that has not settled (domain
  cancelWorkflow): waiting, and enqueued (pending or active: the caller
  cancels the withdrawn jobs and stops the active ones on their workers).
  Returns the advance (WorkflowRun.finish); or nil and 'not_found' when
  there is no such workflow; or nil, 'invalid_state' and its state when it
  has ended.
]]
local function workflowCancel(id, now)
  local run = WorkflowRun.open(id)
  if not run then return nil, 'not_found' end
  if not (NEXT_WORKFLOW_STATES[run.state] and NEXT_WORKFLOW_STATES[run.state].cancelled) then return nil, 'invalid_state', run.state end
  local all = {}
  for i = 0, run.nodeCount - 1 do all[#all + 1] = i end
  WorkflowRun.load(run, all)
  for i = 0, run.nodeCount - 1 do
    if not NODE_SETTLED[run.nodes[i].status] then WorkflowRun.settle(run, i, 'cancelled') end
  end
  WorkflowRun.transition(run, 'cancelled', now)
  return WorkflowRun.finish(run)
end

--[[
  The parent_results JSON text of node `index` of workflow `id` (domain
  assembleParentResults): its template, and those it extends, with each
  node piece replaced by that node's result, the run's copy of it (r<i>,
  written when the node succeeded), or null when the node did not succeed
  or its job gave no result. Results are inlined while their sizes
  (the bytes of their JSON text) add up to at most `maxInlineBytes` (nil:
  no bound), the last pieces first; one that does not fit is replaced by a
  stand-in naming its step and size. Read only; nothing is parsed.
]]
local function workflowParentResults(id, index, maxInlineBytes)
  local planKey = K.workflowPlan .. id
  local head = redis.call('HMGET', planKey, 'n' .. index, 'templateCount')
  local template = head[1] and tonumber(string.match(head[1], '^[^|]*|[^|]*|[^|]*|(%-?%d+)|'))
  if not (template and head[2]) then WorkflowRun.corrupt(id, 'has no node ' .. tostring(index)) end
  -- The templates from the node's own back to the first it extends.
  local segments = {}
  while template ~= WorkflowRun.NO_NODE do
    if #segments >= tonumber(head[2]) then WorkflowRun.corrupt(id, 'has templates that extend in a cycle') end
    local stored = redis.call('HGET', planKey, 't' .. template)
    local base, rest = string.match(stored or '', '^(%-?%d+)(.*)$')
    if not base then WorkflowRun.corrupt(id, 'has no template ' .. template) end
    segments[#segments + 1] = rest
    template = tonumber(base)
  end
  -- Their pieces, first template first, a comma between templates (domain parentResultsPieces).
  local pieces, sources, seen = {}, {}, {}
  for s = #segments, 1, -1 do
    if s < #segments then pieces[#pieces + 1] = ',' end
    for piece in string.gmatch(segments[s], '\31([^\31]*)') do
      local node = string.match(piece, '^#(%d+)$')
      if node then
        node = tonumber(node)
        pieces[#pieces + 1] = node
        if not seen[node] then
          seen[node] = true
          sources[#sources + 1] = node
        end
      else
        pieces[#pieces + 1] = piece
      end
    end
  end
  -- Each source's result: the run's copy, made when the node succeeded.
  local results = {}
  if #sources > 0 then
    local resultFields = {}
    for k, node in ipairs(sources) do resultFields[k] = 'r' .. node end
    local copies = WorkflowRun.hmget(K.workflow .. id, resultFields)
    for k, node in ipairs(sources) do results[node] = copies[k] end
  end
  local texts, inlined = {}, 0
  for i = #pieces, 1, -1 do
    local node = pieces[i]
    if type(node) == 'number' then
      local json = results[node]
      if not json then
        texts[node] = 'null'
      elseif not maxInlineBytes or inlined + #json <= maxInlineBytes then
        inlined = inlined + #json
        texts[node] = json
      else
        local record = redis.call('HGET', planKey, 'n' .. node) or ''
        local key = string.match(record, '^[^|]*|[^|]*|[^|]*|[^|]*|([^|]*)|')
        if not key then WorkflowRun.corrupt(id, 'has no node ' .. node) end
        texts[node] = '{"result_omitted":true,"step":"' .. key .. '","result_size_bytes":' .. #json .. '}'
      end
    end
  end
  for i, piece in ipairs(pieces) do
    if type(piece) == 'number' then pieces[i] = texts[piece] end
  end
  return '{' .. table.concat(pieces) .. '}'
end

--[[
  Applying advances (store port WorkflowStore): what the scripts that
  change jobs do with an advance, in the same script. The job changes of
  every script record their fact through transition() (lib/ojs.lua), which
  calls workflowSettled for a job entering a terminal state; claim calls
  Workflow.started for a workflow job it starts; create-workflow and
  cancel-workflow call the functions below themselves.
]]
local Workflow = { applying = false }

-- A call refused while it applied an advance must not leave the next one applying.
resets[#resets + 1] = function()
  Workflow.applying = false
end

-- A workflow fact (fact-codec.ts WORKFLOW_FIELDS), given the run (as opened) and the change's own fields.
function Workflow.fact(run, change, at, own)
  own = own or NO_EXTRA
  record(factLine('f', {
    at, run.id, run.type, run.name, change, run.jobCount, own.step, own.stepType, own.jobId, own.stepsRemaining, own.durationMs,
    own.failedStep, own.failedStepType, own.failedJobId, run.tp,
  }, 15))
end

--[[
  The facts of an advance (domain workflowFacts), in order: started, the
  step whose job settled (`settled`: {node, outcome, jobId, type,
  startedAt}; when this advance settled its node), then the end.
]]
function Workflow.facts(run, advance, now, settled)
  if not isLogging() then return end
  for _, t in ipairs(advance.transitions) do
    if t[2] == 'running' then Workflow.fact(run, 'started', t[3]) end
  end
  if settled and run.changed[settled.node] then
    local isSuccess = settled.outcome == 'succeeded'
    Workflow.fact(run, isSuccess and 'step_completed' or 'step_failed', now, {
      step = run.records[settled.node].key, stepType = settled.type, jobId = settled.jobId,
      stepsRemaining = run.jobCount - run.completed - run.failed,
      durationMs = isSuccess and settled.startedAt and (now - tonumber(settled.startedAt)) or nil,
    })
  end
  for _, t in ipairs(advance.transitions) do
    if TERMINAL_WORKFLOW[t[2]] then
      local own = { durationMs = tonumber(t[3]) - tonumber(run.createdAt) }
      if t[2] == 'failed' and run.firstFailed then
        local first = run.firstFailed
        WorkflowRun.load(run, { first })
        local f = redis.call('HMGET', run.planKey, 'd' .. first, 'j' .. first)
        own.failedStep, own.failedJobId = run.records[first].key, f[2]
        own.failedStepType = f[1] and cjson.decode(f[1]).type
      end
      Workflow.fact(run, t[2], t[3], own)
    end
  end
end

-- Job `id` of node `node` waits (pending) for its workflow, which now runs it: available, with its parent_results.
function Workflow.enqueueJob(run, node, id, now)
  local f = redis.call('HMGET', K.job .. id, 'state', 'queue', 'type', 'attempt', 'tp', 'discardAt', 'ttlAt', 'createdAt')
  if f[1] ~= 'pending' then return end
  local fields = { 'parentResults', workflowParentResults(run.id, node, PARENT_RESULTS_INLINE_BYTES) }
  local job = { queue = f[2], type = f[3], attempt = f[4], tp = f[5], createdAt = f[8], deadline = waitingDeadline(f[6], f[7], f[4]) }
  enter(id, job, 'pending', 'available', now, fields)
  transition(id, job, 'pending', 'available', now, { reason = 'workflow' })
end

--[[
  Applies an advance of `run`: records its facts, indexes an ended
  workflow, makes the enqueued nodes' jobs available and cancels the
  withdrawn nodes' jobs (an active one on its worker too; reason
  `workflow`, with `actor`). Those cancellations settle nothing more:
  their nodes have settled. Returns the transitions of the cancelled jobs.
]]
function Workflow.apply(run, advance, now, settled, actor)
  Workflow.facts(run, advance, now, settled)
  for _, t in ipairs(advance.transitions) do
    if TERMINAL_WORKFLOW[t[2]] then zadd(K.workflowEnded .. t[2], t[3], run.id) end
  end
  Workflow.applying = true
  for k, node in ipairs(advance.enqueue) do Workflow.enqueueJob(run, node, advance.enqueueJobs[k], now) end
  local transitions = {}
  for k, node in ipairs(advance.withdrawn) do
    local _, _, _, fact = cancelJob(advance.withdrawnJobs[k], now, actor, 'workflow')
    transitions[#transitions + 1] = fact
  end
  Workflow.applying = false
  return transitions
end

-- The workflow and node a job's `wf` field names ("<workflow id>|<node>").
function Workflow.link(wf)
  local id, node = string.match(wf, '^(.+)|(%d+)$')
  if not id then error({ err = 'CORRUPT job link to a workflow ' .. wf }) end
  return id, tonumber(node)
end

--[[
  Job `id` (transition()'s `job`: type, startedAt, and wf when the caller
  read it: false for none) entered terminal state `to`: settles its node,
  succeeded (with its result) or failed, and applies the advance. Nothing
  for a job of no workflow, of one pruned, or while an advance is applied
  (its withdrawn jobs' nodes have settled).
]]
workflowSettled = function(id, job, to, now)
  if Workflow.applying then return end
  local wf = job.wf
  if wf == nil then wf = redis.call('HGET', K.job .. id, 'wf') end
  if not wf then return end
  local workflowId, node = Workflow.link(wf)
  local outcome = to == 'completed' and 'succeeded' or 'failed'
  local result = outcome == 'succeeded' and redis.call('HGET', K.job .. id, 'result') or nil
  local advance = workflowSettle(workflowId, node, outcome, now, result)
  if not advance then return end
  local settled = { node = node, outcome = outcome, jobId = id, type = job.type, startedAt = job.startedAt }
  Workflow.apply(advance.run, advance, now, settled)
end

-- A job of workflow link `wf` started: the first one makes the workflow running (its fact recorded).
function Workflow.started(wf, now)
  local advance = workflowStart(Workflow.link(wf), now)
  if advance and #advance.transitions > 0 then Workflow.apply(advance.run, advance, now) end
end

--[[
  A workflow as get-workflow and cancel-workflow return it (scripts/workflow-record.ts):
  {plan hash, run hash, {{state, queue, attempt, startedAt, completedAt} of each
  job node's job ({} once removed)...}}, or nil when there is none.
]]
function Workflow.record(id)
  local plan = redis.call('HGETALL', K.workflowPlan .. id)
  if #plan == 0 then return nil end
  local jobCount = tonumber(redis.call('HGET', K.workflowPlan .. id, 'jobCount'))
  local fields = {}
  for i = 0, jobCount - 1 do fields[#fields + 1] = 'j' .. i end
  local ids = WorkflowRun.hmget(K.workflowPlan .. id, fields)
  local jobs = {}
  for k, jobId in ipairs(ids) do
    local f = jobId and redis.call('HMGET', K.job .. jobId, 'state', 'queue', 'attempt', 'startedAt', 'completedAt') or {}
    jobs[k] = f[1] and { f[1], f[2], f[3] or '0', f[4] or '', f[5] or '' } or {}
  end
  return { plan, redis.call('HGETALL', K.workflow .. id), jobs }
end
