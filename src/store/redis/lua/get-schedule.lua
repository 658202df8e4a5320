--[[
  get-schedule (read only): one schedule.
  ARGV: 1 name.
  Returns: its hash (empty when there is none).
]]
argCount(1)
return scheduleHash(argId(1))
