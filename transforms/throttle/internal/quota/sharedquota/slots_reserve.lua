-- Reserves up to n slots of the GCRA kept in KEYS[1], on the server's
-- clock, as quota.Slots does in one process (see quota.Reserver).
--
-- ARGV: spacing, n, lead, horizon; times in nanoseconds.
-- Returns {start, granted, end_us, end_ns}: the first slot's offset from the
-- server's now in nanoseconds (where the next free slot is when granted is
-- 0), the units granted, and where the reservation ends (the new TAT) in
-- whole microseconds since the Unix epoch and nanoseconds past them (0 and 0
-- when nothing was granted).
--
-- The TAT is stored as "<microseconds>:<nanoseconds>" so that it stays exact
-- in Lua's numbers (doubles: exact integers to 2^53, 285 years in
-- microseconds but only 104 days in nanoseconds); offsets from now are
-- exact nanoseconds. The key expires when the TAT has passed: a TAT at or
-- before now means the same as none.
if redis.replicate_commands then
  redis.replicate_commands() -- Redis before 5: TIME before a write
end

local spacing = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local lead = tonumber(ARGV[3])
local horizon = tonumber(ARGV[4])

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])

local ahead = 0 -- the TAT's offset from now
local v = redis.call('GET', KEYS[1])
if v then
  local us, ns = string.match(v, '^(%d+):(%d+)$')
  if us then
    ahead = (tonumber(us) - now_us) * 1000 + tonumber(ns)
  end
end

local start = math.max(ahead, lead)
local granted = 0
if start <= horizon then
  granted = math.min(n, math.floor((horizon - start) / spacing) + 1)
end
if granted == 0 then
  return {start, 0, 0, 0}
end

local e = start + granted * spacing
local e_us = now_us + math.floor(e / 1000)
local e_ns = e % 1000
redis.call('SET', KEYS[1], string.format('%.0f:%d', e_us, e_ns), 'PX', math.floor(e / 1000000) + 1)
return {start, granted, e_us, e_ns}
