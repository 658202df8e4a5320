--[[
  get-workflow (read only): one workflow, with its jobs as they stand
  (lib/workflows.lua Workflow.record).
  ARGV: 1 workflow id.
  Returns: {plan hash, run hash, {job fields...}}, or {} when there is none.
]]
argCount(1)
return Workflow.record(argId(1)) or {}
