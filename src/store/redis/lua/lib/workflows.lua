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
  K.workflow .. id, the run:
    state, createdAt, startedAt and completedAt (once set), completedCount, failedCount, settledCount
    s<i>  node i: "<status>,<remaining>,<failedDependencies>"
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
  local f = redis.call('HMGET', runKey, 'state', 'completedCount', 'failedCount', 'settledCount')
  if not f[1] then return nil end
  local p = redis.call('HMGET', planKey, 'jobCount', 'nodeCount', 'exits')
  if not (p[1] and p[2] and p[3]) then WorkflowRun.corrupt(id, 'has a run but no plan') end
  return {
    id = id, runKey = runKey, planKey = planKey, jobCount = tonumber(p[1]), nodeCount = tonumber(p[2]), exits = p[3],
    state = f[1], completed = tonumber(f[2]), failed = tonumber(f[3]), settled = tonumber(f[4]),
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
  enqueueJobs and withdrawnJobs = the job ids of enqueue and withdrawn }.
  The caller makes the enqueued jobs available and cancels the withdrawn ones.
]]
function WorkflowRun.finish(run)
  local changed = {}
  for i in pairs(run.changed) do changed[#changed + 1] = i end
  table.sort(changed)
  local advance = {
    enqueue = run.enqueue, withdrawn = run.withdrawn, changed = changed, transitions = run.transitions,
    enqueueJobs = WorkflowRun.jobIds(run, run.enqueue), withdrawnJobs = WorkflowRun.jobIds(run, run.withdrawn),
  }
  if #changed == 0 and #run.transitions == 0 then return advance end
  local fields = { 'state', run.state, 'completedCount', run.completed, 'failedCount', run.failed, 'settledCount', run.settled }
  if run.startedAt then
    fields[#fields + 1] = 'startedAt'
    fields[#fields + 1] = text(run.startedAt)
  end
  if run.completedAt then
    fields[#fields + 1] = 'completedAt'
    fields[#fields + 1] = text(run.completedAt)
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
  settled changes nothing. Returns the advance (WorkflowRun.finish), or nil
  when there is no such workflow. Refuses (BADARG) a node that is no job
  node, an unknown outcome, and a success of a node never enqueued.
]]
local function workflowSettle(id, index, outcome, now)
  local run = WorkflowRun.open(id)
  if not run then return nil end
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
  node piece replaced by that node's result, the `result` field of its
  job's hash (K.job .. id) as ack stored it, or null when the node did not
  succeed or its job gave no result. Results are inlined while their sizes
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
  -- Each source's result: its job's, when the node succeeded.
  local results = {}
  if #sources > 0 then
    local progressFields, jobFields = {}, {}
    for k, node in ipairs(sources) do
      progressFields[k] = 's' .. node
      jobFields[k] = 'j' .. node
    end
    local progress = WorkflowRun.hmget(K.workflow .. id, progressFields)
    local jobs = WorkflowRun.hmget(planKey, jobFields)
    for k, node in ipairs(sources) do
      if not (progress[k] and jobs[k]) then WorkflowRun.corrupt(id, 'has no job for node ' .. node) end
      if string.match(progress[k], '^(%a+),') == 'succeeded' then results[node] = redis.call('HGET', K.job .. jobs[k], 'result') end
    end
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
