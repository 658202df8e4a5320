--[[
  Reading a script's arguments: the first shared library after the
  generated lib/domain.lua (scripts.ts LUA_LIBRARIES).

  A call's inputs: the scripts are functions of one Redis function library
  (function-library.ts), whose definitions run once, when Redis loads it;
  every call then starts with begin(keys, args), which hands the libraries
  the call's key list and ARGV and resets every table a call fills. Each library
  that keeps per-call state adds its reset to `resets` beside that state, so
  that nothing one call gathered (pending writes, facts, signals, memos)
  reaches the next one, even when that call was refused halfway.

  Settings: every script receives the deployment's settings as its first
  ARGV, before its own arguments (script-runner.ts scriptPrologue): ARGV[1]
  is the key list, every key the scripts name joined by KEY_LIST_SEPARATOR
  (its only KEY is the first of them, which a cluster routes by), and
  ARGV[2] the event log's length (the event retention count; 0 turns the
  log off). Headers, the arg* helpers and their refusals number a script's
  own arguments from 1.

  All or nothing: Lua has no rollback, so every script reads all of its
  ARGV through the arg* helpers (begin has read the settings; a helper
  refuses with a BADARG error reply) before its first write. The TypeScript
  encoders never send a bad value; a refusal here is a bug, and it leaves
  the data untouched.
]]

-- Integer as a string without exponent or rounding, for values returned to the
-- caller or recorded (tostring keeps 14 digits only). '%d' formats as a C
-- long: exact for every integer a script handles (below 2^53), and several
-- times cheaper than a floating-point format such as '%.0f' or tostring's.
local function int(n)
  return string.format('%d', n)
end

-- Instants and durations stay below this: a timestamp the domain accepts
-- plus any duration, and sums of a few of those, are exact in a double.
local MAX_TIME_MS = 2 ^ 50
-- Item counts, limits and budgets stay below this.
local MAX_COUNT = 2 ^ 31

-- The settings that precede a script's own arguments.
local SETTINGS = 2
-- The call's ARGV (begin), and the event log's length (its second), once read.
local argv, eventLogLength
--[[
  The call's integer arguments as read (argInt), by text: false for a text
  that is not one. A batch repeats its times and counts (every job of an
  enqueue was created at the same instant), and reading one costs a
  pattern match and a strtod, a few thousand instructions.
]]
local integers

-- What resets a library's per-call state, given the call's key list (ARGV[1]): one function per library that keeps any.
local resets = {}

-- Reads and checks the settings.
local function readSettings()
  if type(argv[1]) ~= 'string' then error({ err = 'BADARG settings: the key list is missing' }) end
  local text = argv[2]
  local n = text and #text <= 12 and string.match(text, '^%d+$') and tonumber(text)
  if not n or n > MAX_COUNT then error({ err = 'BADARG settings: the event log length is not a count' }) end
  eventLogLength = n
end

--[[
  Starts a call: its ARGV, its settings read (a call refused for
  them writes nothing: no script has started), and no state left by an
  earlier call. The arg* helpers below are on every script's hot path (an
  enqueue reads 14 arguments per job): they read ARGV directly and call no
  more than one helper deep.
]]
local function begin(_, args)
  argv = args
  integers = {}
  readSettings()
  for i = 1, #resets do resets[i](argv[1]) end
end

local function refuse(i, problem)
  error({ err = 'BADARG ARGV[' .. i .. '] ' .. problem })
end

-- A script's own argument i (its header's numbering).
local function argText(i)
  local value = argv[SETTINGS + i]
  if value == nil then refuse(i, 'is missing') end
  return value
end

-- How many arguments of its own the script received.
local function ownArgCount()
  return #argv - SETTINGS
end

-- A non-empty string: an id, a token, a required JSON value.
local function argId(i)
  local value = argv[SETTINGS + i]
  if value == nil then refuse(i, 'is missing') end
  if value == '' then refuse(i, 'must not be empty') end
  return value
end

-- A string, or nil for ''.
local function argOptional(i)
  local value = argText(i)
  if value == '' then return nil end
  return value
end

-- An integer from min to max, written as digits: tonumber alone would also
-- read exponents, hexadecimal, 'nan' and 'inf'.
local function argInt(i, min, max)
  local text = argv[SETTINGS + i]
  if text == nil then refuse(i, 'is missing') end
  local n = integers[text]
  if n == nil then
    n = #text <= 20 and string.match(text, '^%-?%d+$') and tonumber(text) or false
    integers[text] = n
  end
  if not n or n < min or n > max then
    refuse(i, "'" .. string.sub(text, 1, 40) .. "' is not an integer from " .. int(min) .. ' to ' .. int(max))
  end
  return n
end

local function argOptionalInt(i, min, max)
  if argv[SETTINGS + i] == '' then return nil end
  return argInt(i, min, max)
end

-- A finite number from min to max.
local function argNumber(i, min, max)
  local text = argText(i)
  local n = tonumber(text)
  -- NaN is the one value unequal to itself; the bounds exclude the infinities.
  if not n or n ~= n or n < min or n > max then
    refuse(i, "'" .. string.sub(text, 1, 40) .. "' is not a number from " .. min .. ' to ' .. max)
  end
  return n
end

-- The current time: a timestamp the domain accepts.
local function argNow(i)
  return argInt(i, TIMESTAMP_MIN_MS, TIMESTAMP_MAX_MS)
end

-- An instant (a deadline may lie past the last timestamp a client may send) or a duration.
local function argTime(i)
  return argInt(i, 0, MAX_TIME_MS)
end

local function argOptionalTime(i)
  return argOptionalInt(i, 0, MAX_TIME_MS)
end

local function argCountOf(i)
  return argInt(i, 0, MAX_COUNT)
end

local function argFlag(i)
  local text = argText(i)
  if text ~= '0' and text ~= '1' then refuse(i, 'is not 0 or 1') end
  return text == '1'
end

-- A member of `allowed` (a set of domain.lua, such as WAITING or NEXT_STATES.active).
local function argMember(i, allowed)
  local text = argText(i)
  if not allowed[text] then refuse(i, "'" .. string.sub(text, 1, 40) .. "' is not allowed here") end
  return text
end

-- Exactly `n` arguments of its own: a script with a fixed list.
local function argCount(n)
  if ownArgCount() ~= n then error({ err = 'BADARG expected ' .. n .. ' arguments, got ' .. ownArgCount() }) end
end

--[[
  A batch whose header is at ARGV[at]: its item count, then its stride (the
  number of fields per item, which must be `stride`, the fields this script
  reads), then the items, which must end the arguments. Returns the count
  and the index of the first item's first field.
]]
local function argBatch(at, stride)
  local count = argCountOf(at)
  if argInt(at + 1, 0, 1000) ~= stride then refuse(at + 1, 'is not the stride (' .. stride .. ') this script reads') end
  if ownArgCount() ~= at + 1 + count * stride then
    error({ err = 'BADARG ' .. count .. ' items of ' .. stride .. ' fields from ARGV[' .. (at + 2) .. '] do not end at ARGV[' .. ownArgCount() .. ']' })
  end
  return count, at + 2
end
