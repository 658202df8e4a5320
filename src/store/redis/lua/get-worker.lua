--[[
  get-worker (read only): one worker with the ids of the jobs it holds.
  ARGV: 1 worker id.
  Returns: {} | {worker hash, {held job id...}}.
]]
argCount(1)
return workerSnapshot(argId(1)) or {}
