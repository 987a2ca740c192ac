-- npc_guard.lua - a guard NPC's AI in Lua: it watches with a cone of sight
-- and a margin, turns to what it hears, and reacts to what enters and
-- leaves its senses, reading each tick's events as one array.
--   LUA_CPATH='/usr/local/lib/lua/5.4/?.so;;' lua5.4 npc_guard.lua
--   LUA_CPATH='/usr/local/lib/lua/5.1/?.so;;' luajit npc_guard.lua
local percept = require "percept"

local w = percept.open{config = "[percept]\nbackend = grid\nmove_events = off\n"}
local GUARD, THIEF = 1, 2
local guard = {x = 100, y = 100}
w:add(GUARD, {x = guard.x, y = guard.y, facing = {1, 0},
              sight = {range = 40, margin = 10, fov = 120}, hearing = 15})
w:add(THIEF, {x = 60, y = 100, sight = 30, hearing = 30})

-- The guard's reactions to the last tick's events; returns its turn, if any.
local function react(tick)
  local turn
  for _, e in ipairs(w:event_list()) do
    if e.observer == GUARD then
      if e.kind == "enter" and e.sense == "sight" then
        print(string.format("tick %d: the guard sees %d: \"Halt!\"", tick, e.target))
      elseif e.kind == "leave" and e.sense == "sight" then
        print(string.format("tick %d: the guard lost sight of %d", tick, e.target))
      elseif e.kind == "enter" and e.sense == "hearing" then
        print(string.format("tick %d: the guard hears %d and turns to it", tick, e.target))
        turn = {id = GUARD, facing = {e.x - guard.x, e.y - guard.y}}
      end
    end
  end
  return turn
end

for tick, p in ipairs{{90, 100}, {95, 130}, {100, 150}, {100, 170}} do
  w:tick{{THIEF, p[1], p[2]}}
  local turn = react(tick)
  -- The world may change right after reading: no callback is running.
  if turn then
    w:tick{turn}
    react(tick)
  end
end
w:close()
