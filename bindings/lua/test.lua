-- test.lua - the Lua module's behaviour: worlds, entities, ticks, stimuli,
-- events as an iterator and a list, errors raised with the library's
-- message, and closing. lua.test runs it; traces against the reference
-- are replay.lua's part.
local percept = require "percept"

local failures = 0
local function expect(cond, what)
  if not cond then
    failures = failures + 1
    io.stderr:write("FAIL: ", what, "\n")
  end
end

local function event_lines(w)
  local lines = {}
  for _, kind, observer, target, sense in w:events() do
    lines[#lines + 1] = string.format("%s %d %s %s", kind, observer, tostring(target), sense)
  end
  return table.concat(lines, ", ")
end

local config = "[percept]\nbackend = grid\nmove_events = off\n"

do
  local w <close> = percept.open{config = config}
  w:add(1, {x = 100, y = 100, facing = {1, 0},
            sight = {range = 40, margin = 10, fov = 120}, hearing = 15})
  w:add(2, {x = 60, y = 100, sight = 30, hearing = 30})
  expect(event_lines(w) == "", "add, 40 apart: " .. event_lines(w))
  -- A tick: the guard turns as the thief creeps up behind; heard, not seen.
  w:tick{{id = 1, facing = {1, 0.1}}, {2, 90, 100}}
  expect(event_lines(w) == "enter 1 2 hearing, enter 2 1 sight, enter 2 1 hearing",
         "tick behind: " .. event_lines(w))
  -- In front, 32 away: seen, out of hearing. The list gives the same
  -- events as tables.
  w:tick{{2, 130, 110}}
  local list = w:event_list()
  expect(#list == 4 and list[1].kind == "enter" and list[1].observer == 1 and
         list[1].target == 2 and list[1].sense == "sight" and list[1].x == 130 and
         list[1].y == 110 and list[2].kind == "leave" and list[2].sense == "hearing" and
         list[4].observer == 2, "event_list in front")
  -- The margin keeps it at 46; a move to where it is changes nothing.
  w:move(2, 145, 110, 0)
  expect(event_lines(w) == "", "within the margin: " .. event_lines(w))
  w:move(2, 145, 110)
  expect(#w:event_list() == 0, "a move to the same place")
  expect(w:perceives(1, 2, "sight") and not w:perceives(2, 1, "hearing"), "perceives")
  local seen = w:perceived(1, "sight")
  expect(#seen == 1 and seen[1] == 2, "perceived")
  -- An update: the thief's hearing grows back.
  w:update(2, {hearing = 60})
  expect(event_lines(w) == "enter 2 1 hearing", "update: " .. event_lines(w))
  -- A stimulus with no source: the target is nil.
  w:emit{sense = "hearing", x = 140, y = 110, strength = 1}
  local stim = w:event_list()
  expect(#stim == 1 and stim[1].kind == "stimulus" and stim[1].observer == 2 and
         stim[1].target == nil, "emit")
  w:emit{sense = "hearing", x = 100, y = 100, source = 1}
  expect(event_lines(w) == "stimulus 2 1 hearing", "emit with a source: " .. event_lines(w))
  w:set_hidden(2, "sight", true)
  expect(event_lines(w) == "leave 1 2 sight", "hidden: " .. event_lines(w))
  w:set_range(1, "hearing", 0)
  w:remove(2)
  expect(w:count() == 1, "remove")
  -- Errors carry the library's message; a bad tick entry is named.
  local ok, err = pcall(w.move, w, 99, 0, 0)
  expect(not ok and err:find("unknown entity 99", 1, true), "unknown entity: " .. tostring(err))
  w:add(3, {x = 0, y = 0, sight = 5})
  ok, err = pcall(w.tick, w, {{3, 1, 1}, {3, 2, 2}})
  expect(not ok and err:find("tick entry 2", 1, true), "entity twice: " .. tostring(err))
  ok, err = pcall(w.add, w, 4, {x = 0, y = 0, sight = -1})
  expect(not ok and err:find("sight range", 1, true), "bad range: " .. tostring(err))
  ok, err = pcall(w.add, w, 4, {x = 0, y = 0, taste = 3})
  expect(ok, "unknown fields are ignored")
  ok, err = pcall(w.emit, w, {sense = "taste"})
  expect(not ok and err:find("no sense 'taste'", 1, true), "bad sense: " .. tostring(err))
  w:close()
  ok, err = pcall(w.count, w)
  expect(not ok and err:find("closed", 1, true), "closed: " .. tostring(err))
end

-- A bad config is an error naming its line and key.
local ok, err = pcall(percept.open, {config = "[percept]\nbackend = grid\n[world]\nthreads = 0\n"})
expect(not ok and err:find(":4:", 1, true) and err:find("threads", 1, true),
       "bad config: " .. tostring(err))

-- Threads: a world on two threads gives the one-thread world's events.
do
  local a <close> = percept.open{config = config}
  local b <close> = percept.open{config = config, threads = 2}
  local seed = 1
  local function rand(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n end
  for id = 1, 300 do
    local e = {x = rand(200), y = rand(200), sight = 10 + rand(10), hearing = rand(15)}
    a:add(id, e)
    b:add(id, e)
  end
  local same, total = true, 0
  for _ = 1, 10 do
    local tick = {}
    for id = 1, 300 do tick[#tick + 1] = {id, rand(200), rand(200)} end
    a:tick(tick)
    b:tick(tick)
    local ea, eb = event_lines(a), event_lines(b)
    same = same and ea == eb
    total = total + #a:event_list()
  end
  expect(same and total > 100, "two threads")
end

do
  -- A tick's move without a height keeps the entity's, as w:move does.
  local w <close> = percept.open{config = config}
  w:add(1, {x = 0, y = 0, sight = 10})
  w:add(2, {x = 100, y = 0, z = 50})
  w:tick{{2, 1, 0}}
  expect(event_lines(w) == "", "a move without a height, 50 above: " .. event_lines(w))
  w:tick{{2, 1, 0, 0}}
  expect(event_lines(w) == "enter 1 2 sight", "down to the ground: " .. event_lines(w))
  local ok = pcall(w.tick, w, {{3, 1, 0}})
  expect(not ok, "a move of an unknown ID without a height")
end

do
  -- A change of some fields of an unknown entity names it.
  local w <close> = percept.open{config = config}
  w:add(1, {x = 0, y = 0, sight = 10})
  w:move(1, 1, 1)
  local ok, err = pcall(w.update, w, 4000000000, {sight = 5})
  expect(not ok and err:find("4000000000", 1, true), "update of an unknown entity: " .. tostring(err))
  ok, err = pcall(w.tick, w, {{id = 77, update = {sight = 5}}})
  expect(not ok and err:find("77", 1, true), "a tick's update of an unknown entity: " .. tostring(err))
end

if failures > 0 then
  io.stderr:write(failures, " failed\n")
  os.exit(1)
end
print("lua: all passed")
