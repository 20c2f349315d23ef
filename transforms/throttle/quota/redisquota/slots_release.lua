-- Gives back the last unused units of a reservation of the GCRA kept in
-- KEYS[1] (see slots_reserve.lua), if it is still the last one: the TAT
-- still stands where it ended. The TAT moves back by unused × spacing, but
-- not before the server's now.
--
-- ARGV: end_us, end_ns (where the reservation ended, as reserve returned
-- them), unused, spacing (nanoseconds).
-- Returns how many units were given back: those whose slots start at or
-- after now, or 0 when a later reservation was made or the TAT has passed.
if redis.replicate_commands then
  redis.replicate_commands()
end

local v = redis.call('GET', KEYS[1])
if not v then
  return 0
end
local us, ns = string.match(v, '^(%d+):(%d+)$')
if not us or tonumber(us) ~= tonumber(ARGV[1]) or tonumber(ns) ~= tonumber(ARGV[2]) then
  return 0
end

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ahead = (tonumber(us) - now_us) * 1000 + tonumber(ns)
if ahead <= 0 then
  return 0
end

local unused = tonumber(ARGV[3])
local spacing = tonumber(ARGV[4])
local back = math.min(unused, math.floor(ahead / spacing))
local e = ahead - unused * spacing
if e <= 0 then
  redis.call('DEL', KEYS[1])
  return back
end
local e_us = now_us + math.floor(e / 1000)
local e_ns = e % 1000
redis.call('SET', KEYS[1], string.format('%.0f:%d', e_us, e_ns), 'PX', math.floor(e / 1000000) + 1)
return back
