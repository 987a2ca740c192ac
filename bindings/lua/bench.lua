-- bench.lua - what draining a tick's events costs in Lua, on a uniform
-- walk: N entities (sight 50, hearing 30, smell 15, MOVE events on,
-- backend grid) in a square of side sqrt(N * pi * 50^2 / 20), where each
-- sees about 20 others; every tick every entity moves 5 (a tenth of its
-- sight) on a slowly turning heading, reflecting at the walls. Prints the
-- median over the ticks of the time per event drained with w:events()
-- (the loop reading kind, observer, target and sense) and with
-- w:event_list(), and of the time of a tick from Lua tables.
--   lua5.4 bench.lua [N [TICKS]]
local percept = require "percept"
local n, ticks = tonumber(arg[1] or "10000"), tonumber(arg[2] or "20")
local side = math.sqrt(n * math.pi * 50 * 50 / 20)
local w = percept.open{config = string.format(
  "[percept]\nbackend = grid\nmove_events = on\n[world]\nmin_x = 0\nmin_y = 0\nmax_x = %.17g\nmax_y = %.17g\n",
  side, side)}
math.randomseed(2024)
local x, y, heading = {}, {}, {}
for i = 1, n do
  x[i], y[i], heading[i] = math.random() * side, math.random() * side, math.random() * 2 * math.pi
  w:add(i, {x = x[i], y = y[i], sight = 50, hearing = 30, smell = 15})
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local drain, list, tick, events = {}, {}, {}, 0
local entries = {}
for i = 1, n do entries[i] = {i, 0, 0} end
for t = 1, ticks do
  for i = 1, n do
    heading[i] = heading[i] + (math.random() - 0.5) * 0.2
    local nx, ny = x[i] + 5 * math.cos(heading[i]), y[i] + 5 * math.sin(heading[i])
    if nx < 0 or nx > side then heading[i] = math.pi - heading[i]; nx = x[i] end
    if ny < 0 or ny > side then heading[i] = -heading[i]; ny = y[i] end
    x[i], y[i] = nx, ny
    local e = entries[i]
    e[2], e[3] = nx, ny
  end
  local t0 = os.clock()
  w:tick(entries)
  local t1 = os.clock()
  local count = 0
  for _, kind, observer, target, sense in w:events() do count = count + 1 end
  local t2 = os.clock()
  local l = w:event_list()
  local t3 = os.clock()
  tick[t], drain[t], list[t] = t1 - t0, (t2 - t1) / count, (t3 - t2) / #l
  events = count
end
print(string.format("%d entities, %d events a tick: w:events() %.1f ns per event, " ..
                    "w:event_list() %.0f ns per event, a tick %.1f ms (medians of %d ticks)",
                    n, events, median(drain) * 1e9, median(list) * 1e9, median(tick) * 1e3, ticks))
w:close()
