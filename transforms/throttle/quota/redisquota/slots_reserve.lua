-- Reserves up to n slots of the GCRA kept in KEYS[1], on the server's
-- clock, as quota.Slots does in one process (see quota.Reserver).
--
-- ARGV: spacing, n, lead, horizon; times in nanoseconds; then mark (how
-- long, in milliseconds, KEYS[2] is to say that the caller's tier sends; 0
-- for a tier without a share: KEYS[2] is not touched) and the spacing of
-- each cap the caller's tier is held to (quota.Shares), whose TAT is in
-- KEYS[1+2i] and which applies while KEYS[2+2i] exists (the higher tier
-- sends).
-- Returns {start, granted, end_us, end_ns, wait, now_us}: the first slot's offset
-- from the server's now in nanoseconds (where the next free slot is when
-- granted is 0), the units granted, where the reservation ends (the new
-- TAT) in whole microseconds since the Unix epoch and nanoseconds past them
-- (0 and 0 when nothing was granted), and, when a cap applied, the offset
-- from now at which it lets the next unit start (else 0), and the server's
-- now (TIME) in microseconds since the Unix epoch, for the caller to place
-- the offsets on its clock.
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

local mark = tonumber(ARGV[5] or '0')

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- ahead returns the offset from now of the TAT kept in key (0 if none).
local function ahead(key)
  local v = redis.call('GET', key)
  if v then
    local us, ns = string.match(v, '^(%d+):(%d+)$')
    if us then
      return (tonumber(us) - now_us) * 1000 + tonumber(ns)
    end
  end
  return 0
end

-- set stores the TAT e nanoseconds from now in key, expiring when it passes.
local function set(key, e)
  local e_us = now_us + math.floor(e / 1000)
  local e_ns = e % 1000
  redis.call('SET', key, string.format('%.0f:%d', e_us, e_ns), 'PX', math.floor(e / 1000000) + 1)
  return e_us, e_ns
end

if mark > 0 then
  redis.call('SET', KEYS[2], '1', 'PX', mark)
end

local start = math.max(ahead(KEYS[1]), lead)
local granted = 0
if start <= horizon then
  granted = math.min(n, math.floor((horizon - start) / spacing) + 1)
end

-- The caps that apply: each a GCRA at its own spacing, from now at the
-- earliest, letting units start by the horizon (quota's capSlots).
local caps = {}
for i = 6, #ARGV do
  local k = 2 * (i - 5) + 1
  if redis.call('EXISTS', KEYS[k + 1]) == 1 then
    local a = math.max(ahead(KEYS[k]), 0)
    local fit = 0
    if a <= horizon then
      fit = math.floor((horizon - a) / tonumber(ARGV[i])) + 1
    end
    granted = math.min(granted, fit)
    caps[#caps + 1] = {KEYS[k], a, tonumber(ARGV[i])}
  end
end
local wait = 0
for _, c in ipairs(caps) do
  local e = c[2] + granted * c[3]
  if granted < n then
    wait = math.max(wait, e - horizon)
  end
  if granted > 0 then
    set(c[1], e)
  end
end

if granted == 0 then
  return {start, 0, 0, 0, wait, now_us}
end
local e_us, e_ns = set(KEYS[1], start + granted * spacing)
return {start, granted, e_us, e_ns, wait, now_us}
