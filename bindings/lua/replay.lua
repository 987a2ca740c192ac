-- replay.lua - a trace (docs/trace-format.md) run through the Lua module,
-- printing what percept-replay prints, so that lua.test can compare it
-- with the reference's output. MOVE events are not part of the format.
--   lua5.4 replay.lua TRACE BACKEND
local percept = require "percept"

local path, backend = arg[1], arg[2] or "bruteforce"
local unpack = table.unpack or unpack -- LuaJIT has the older name
local senses, bounds = {"sight", "hearing", "smell"}, nil
local world, ticking, out = nil, nil, {}

local function open()
  local ini = {"[percept]\nbackend = " .. backend .. "\nmove_events = off\n[world]\n",
               "senses = " .. table.concat(senses, " ") .. "\n"}
  if bounds then
    ini[#ini + 1] = string.format("min_x = %s\nmin_y = %s\nmax_x = %s\nmax_y = %s\n",
                                  bounds[1], bounds[2], bounds[3], bounds[4])
  end
  world = percept.open{config = table.concat(ini)}
end

-- FIELD=VALUE words into an entity table for w:add or w:update.
local function fields(words, first)
  local t = {}
  for i = first, #words do
    local key, value = words[i]:match("^([^=]+)=(.*)$")
    local sense, part = (key or ""):match("^([^.]+)%.(.+)$")
    if not key then
      -- a number before the fields: add's position
    elseif key == "tags" then
      t.tags = tonumber(value)
    elseif key == "facing" then
      local f = {}
      for v in value:gmatch("[^,]+") do f[#f + 1] = tonumber(v) end
      t.facing = f
    elseif key == "hide" then
      local h = {}
      for v in value:gmatch("[^,]+") do h[#h + 1] = v end
      t.hidden = h
    elseif sense then
      t[sense] = t[sense] or {}
      t[sense][part] = tonumber(value)
    else
      t[key] = t[key] or {}
      t[key].range = tonumber(value)
    end
  end
  return t
end

-- The leading numbers of words[first..], up to n of them (missing: 0).
local function numbers(words, first, n)
  local v = {}
  for i = 1, n do v[i] = tonumber(words[first + i - 1] or "0") or 0 end
  return unpack(v)
end

local function flush(line)
  for _, kind, observer, target, sense in world:events() do
    if kind ~= "move" then
      out[#out + 1] = string.format("%d %d %s %s %s", line, observer,
                                    target and tostring(target) or "-", sense, kind)
    end
  end
end

local line = 0
for text in io.lines(path) do
  line = line + 1
  local w = {}
  for word in text:gmatch("%S+") do w[#w + 1] = word end
  local cmd = w[1]
  if not cmd or cmd:sub(1, 1) == "#" then
    -- blank or a comment
  elseif cmd == "senses" then
    senses = {unpack(w, 2)}
  elseif cmd == "world" then
    bounds = {w[2], w[3], w[4], w[5]}
  else
    if not world then open() end
    local id = tonumber(w[2])
    if ticking and cmd ~= "end" then
      if cmd == "move" then
        ticking[#ticking + 1] = {id, numbers(w, 3, 3)}
      elseif cmd == "face" then
        ticking[#ticking + 1] = {id = id, facing = {numbers(w, 3, 3)}}
      else -- set
        ticking[#ticking + 1] = {id = id, update = fields(w, 3)}
      end
    elseif cmd == "tick" then
      ticking = {}
    elseif cmd == "end" then
      world:tick(ticking)
      ticking = nil
      flush(line)
    else
      if cmd == "add" then
        local t = fields(w, 3)
        t.x, t.y = tonumber(w[3]), tonumber(w[4])
        if w[5] and not w[5]:find("=") then t.z = tonumber(w[5]) end
        world:add(id, t)
      elseif cmd == "move" then
        world:move(id, numbers(w, 3, 3))
      elseif cmd == "face" then
        world:turn(id, numbers(w, 3, 3))
      elseif cmd == "set" then
        world:update(id, fields(w, 3))
      elseif cmd == "remove" then
        world:remove(id)
      elseif cmd == "range" then
        world:set_range(id, w[3], tonumber(w[4]))
      elseif cmd == "hide" or cmd == "show" then
        world:set_hidden(id, w[3], cmd == "hide")
      elseif cmd == "emit" then
        local st = {sense = w[2]}
        st.x, st.y = tonumber(w[3]), tonumber(w[4])
        for i = 5, #w do
          local k, v = w[i]:match("^([^=]+)=(.*)$")
          if k then st[k] = tonumber(v) else st.z = tonumber(w[i]) end
        end
        world:emit(st)
      else
        error(path .. ":" .. line .. ": unknown command " .. cmd)
      end
      flush(line)
    end
  end
end
if world then world:close() end
io.write(table.concat(out, "\n"), #out > 0 and "\n" or "")
