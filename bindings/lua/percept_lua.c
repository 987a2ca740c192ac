/*
 * percept_lua.c - the Lua 5.4 module `percept`: worlds as userdata, entities
 * as tables, ticks from arrays, and each call's events read back from the
 * world's event buffer as an array or an iterator. Every failed call raises
 * an error with the library's message.
 *
 *   local percept = require "percept"
 *   local w <close> = percept.open{config = "[percept]\nbackend = grid\n"}
 *   w:add(1, {x = 0, y = 0, sight = 30, hearing = {range = 20, margin = 5}})
 *   w:tick{{1, 10, 0}, {2, 5, 5, 1}, {id = 3, facing = {0, 1}}}
 *   for _, kind, observer, target, sense in w:events() do ... end
 */
#include "compat.h"
#include <inttypes.h>
#include <percept.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORLD "percept.world"

/* A world, and the room its ticks build their entries in, kept from tick
 * to tick so that a tick allocates nothing once it has grown. */
typedef struct lworld {
    percept_world *w;
    percept_change *changes;
    size_t changes_room;
    percept_entity_desc *descs; /* the descriptions of UPDATE entries */
    size_t descs_room;
} lworld;

static const char *const kinds[] = {"enter", "leave", "move", "stimulus"};

static percept_world *check_world(lua_State *L, int i)
{
    lworld *lw = luaL_checkudata(L, i, WORLD);
    if (!lw->w)
        luaL_error(L, "percept: the world is closed");
    return lw->w;
}

/* Raise the world's message when `rc` is an error. */
static void check(lua_State *L, percept_world *w, int rc)
{
    if (rc < 0)
        luaL_error(L, "%s", percept_errmsg(w));
}

static percept_sense check_sense(lua_State *L, percept_world *w, int i)
{
    const char *name = luaL_checkstring(L, i);
    int s = percept_sense_index(w, name);
    if (s < 0)
        luaL_error(L, "percept: the world has no sense '%s'", name);
    return s;
}

static double field_number(lua_State *L, int t, const char *key, double otherwise)
{
    double v = otherwise;
    if (lua_getfield(L, t, key) != LUA_TNIL)
        v = luaL_checknumber(L, -1);
    lua_pop(L, 1);
    return v;
}

/* Fields of an entity table into *d: x, y, z, facing = {fx, fy[, fz]},
 * tags, hidden = {"sight", ...}, and per sense NAME = range or NAME =
 * {range =, margin =, fov =, ignore =}. Fields absent keep *d's values. */
static void read_entity(lua_State *L, percept_world *w, int t, percept_entity_desc *d)
{
    luaL_checktype(L, t, LUA_TTABLE);
    d->x = field_number(L, t, "x", d->x);
    d->y = field_number(L, t, "y", d->y);
    d->z = field_number(L, t, "z", d->z);
    d->tags = (uint32_t)field_number(L, t, "tags", d->tags);
    if (lua_getfield(L, t, "facing") == LUA_TTABLE) {
        for (int k = 0; k < 3; k++) {
            lua_geti(L, -1, k + 1);
            d->facing[k] = lua_isnil(L, -1) ? 0 : luaL_checknumber(L, -1);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    if (lua_getfield(L, t, "hidden") == LUA_TTABLE) {
        d->hidden = 0;
        for (lua_Integer k = 1; lua_geti(L, -1, k) != LUA_TNIL; k++) {
            d->hidden |= PERCEPT_SENSE_BIT(check_sense(L, w, lua_gettop(L)));
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    for (int s = 0; s < percept_sense_count(w); s++) {
        percept_sense_params *p = &d->sense[s];
        int type = lua_getfield(L, t, percept_sense_name(w, s));
        if (type == LUA_TNUMBER) {
            p->range = lua_tonumber(L, -1);
        } else if (type == LUA_TTABLE) {
            int st = lua_gettop(L);
            p->range = field_number(L, st, "range", p->range);
            p->margin = field_number(L, st, "margin", p->margin);
            p->fov = field_number(L, st, "fov", p->fov);
            p->ignore = (uint32_t)field_number(L, st, "ignore", p->ignore);
        } else if (type != LUA_TNIL) {
            luaL_error(L, "percept: field '%s' must be a range or a table",
                       percept_sense_name(w, s));
        }
        lua_pop(L, 1);
    }
}

/* percept.open{config = TEXT | file = PATH, backend =, plugin_dir =, threads =} */
static int l_open(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    percept_options o = PERCEPT_OPTIONS_INIT;
    lua_getfield(L, 1, "backend");
    o.backend = lua_tostring(L, -1);
    lua_getfield(L, 1, "plugin_dir");
    o.plugin_dir = lua_tostring(L, -1);
    o.threads = (size_t)field_number(L, 1, "threads", 0);
    lua_getfield(L, 1, "config");
    const char *text = lua_tostring(L, -1);
    lua_getfield(L, 1, "file");
    const char *file = lua_tostring(L, -1);
    if (!text && !file)
        text = "";
    lworld *lw = lua_newuserdatauv(L, sizeof *lw, 0);
    memset(lw, 0, sizeof *lw);
    luaL_setmetatable(L, WORLD);
    percept_error err;
    int rc = file ? percept_world_open(&lw->w, file, &o, &err)
                  : percept_world_open_string(&lw->w, text, NULL, &o, &err);
    if (rc != PERCEPT_OK)
        return luaL_error(L, "%s", err.text);
    percept_set_event_buffer(lw->w, 1);
    return 1;
}

static int l_close(lua_State *L)
{
    lworld *lw = luaL_checkudata(L, 1, WORLD);
    percept_world_close(lw->w);
    free(lw->changes);
    free(lw->descs);
    memset(lw, 0, sizeof *lw);
    return 0;
}

static percept_id check_id(lua_State *L, int i)
{
    lua_Integer id = luaL_checkinteger(L, i);
    luaL_argcheck(L, id >= 0 && id <= (lua_Integer)UINT32_MAX, i, "an ID is 0 to 2^32 - 1");
    return (percept_id)id;
}

/* Entity `id`'s description into *d, for a change of some of its fields;
 * raises for an unknown ID (a reading call sets no message of the world's). */
static void describe(lua_State *L, percept_world *w, percept_id id, percept_entity_desc *d,
                     const char *call)
{
    int rc = percept_get_entity(w, id, d);
    if (rc < 0) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, id);
        luaL_error(L, "percept: %s: entity %s: %s", call, name, percept_strerror(rc));
    }
}

static int l_add(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    read_entity(L, w, 3, &d);
    check(L, w, percept_add(w, check_id(L, 2), &d));
    return 0;
}

static int l_update(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    percept_id id = check_id(L, 2);
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    describe(L, w, id, &d, "update");
    read_entity(L, w, 3, &d);
    check(L, w, percept_update(w, id, &d));
    return 0;
}

/* w:move(id, x, y[, z]): without z, the height stays. */
static int l_move(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    percept_id id = check_id(L, 2);
    double x = luaL_checknumber(L, 3), y = luaL_checknumber(L, 4);
    check(L, w,
          lua_isnoneornil(L, 5) ? percept_move(w, id, x, y)
                                : percept_move3(w, id, x, y, luaL_checknumber(L, 5)));
    return 0;
}

static int l_turn(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    check(L, w,
          percept_turn(w, check_id(L, 2), luaL_checknumber(L, 3), luaL_checknumber(L, 4),
                       luaL_optnumber(L, 5, 0)));
    return 0;
}

/* w:set_range(id, sense, range) */
static int l_set_range(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    percept_id id = check_id(L, 2);
    percept_sense s = check_sense(L, w, 3);
    check(L, w, percept_set_range(w, id, s, luaL_checknumber(L, 4)));
    return 0;
}

/* w:set_hidden(id, sense, hidden) */
static int l_set_hidden(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    percept_id id = check_id(L, 2);
    percept_sense s = check_sense(L, w, 3);
    check(L, w, percept_set_hidden(w, id, s, lua_toboolean(L, 4)));
    return 0;
}

static int l_remove(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    check(L, w, percept_remove(w, check_id(L, 2)));
    return 0;
}

/* Make room for `n` items of `size` bytes at *room, raising an error
 * (and keeping the old room) when there is no memory. */
static void *grow(lua_State *L, void **at, size_t *room, size_t n, size_t size)
{
    if (n <= *room)
        return *at;
    size_t want = n > 2 * *room ? n : 2 * *room;
    void *p = want <= SIZE_MAX / size ? realloc(*at, want * size) : NULL;
    if (!p)
        luaL_error(L, "percept: out of memory for a tick of %d entries", (int)n);
    *at = p;
    *room = want;
    return p;
}

/* w:tick{entry, ...}: {id, x, y[, z]} moves (z omitted: the height stays),
 * {id = ID, facing = {fx, fy[, fz]}} turns, {id = ID, update = TABLE}
 * updates. */
static int l_tick(lua_State *L)
{
    lworld *lw = luaL_checkudata(L, 1, WORLD);
    percept_world *w = check_world(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 2);
    if (n < 0)
        n = 0;
    percept_change *ch = grow(L, (void **)&lw->changes, &lw->changes_room, (size_t)n, sizeof *ch);
    size_t updates = 0;
    for (lua_Integer i = 0; i < n; i++) {
        lua_geti(L, 2, i + 1);
        int e = lua_gettop(L);
        luaL_checktype(L, e, LUA_TTABLE);
        percept_change c = {0, PERCEPT_CHANGE_MOVE, 0, 0, 0, NULL};
        if (lua_getfield(L, e, "id") != LUA_TNIL) {
            c.id = check_id(L, -1);
            if (lua_getfield(L, e, "facing") == LUA_TTABLE) {
                c.kind = PERCEPT_CHANGE_TURN;
                lua_geti(L, -1, 1);
                lua_geti(L, -2, 2);
                lua_geti(L, -3, 3);
                c.x = luaL_checknumber(L, -3);
                c.y = luaL_checknumber(L, -2);
                c.z = luaL_optnumber(L, -1, 0);
                lua_pop(L, 3);
            } else if (lua_getfield(L, e, "update") == LUA_TTABLE) {
                c.kind = PERCEPT_CHANGE_UPDATE;
                percept_entity_desc *d =
                    grow(L, (void **)&lw->descs, &lw->descs_room, updates + 1, sizeof *d);
                d += updates++;
                *d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
                describe(L, w, c.id, d, "tick");
                read_entity(L, w, lua_gettop(L), d);
                lua_pop(L, 1);
            } else {
                lua_pop(L, 1);
                luaL_error(L, "percept: tick entry %d names an id but no facing or update",
                           (int)(i + 1));
            }
            lua_pop(L, 1);
        } else {
            lua_geti(L, e, 1);
            lua_geti(L, e, 2);
            lua_geti(L, e, 3);
            lua_geti(L, e, 4);
            c.id = check_id(L, -4);
            c.x = luaL_checknumber(L, -3);
            c.y = luaL_checknumber(L, -2);
            if (lua_isnil(L, -1)) {
                /* No height: it stays, as in w:move(). An unknown ID is
                 * left for percept_tick() to name. */
                percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
                if (percept_get_entity(w, c.id, &d) == PERCEPT_OK)
                    c.z = d.z;
            } else {
                c.z = luaL_checknumber(L, -1);
            }
            lua_pop(L, 4);
        }
        lua_pop(L, 2);
        ch[i] = c;
    }
    /* The descriptions may have moved as their room grew: point at them now. */
    for (size_t i = 0, u = 0; i < (size_t)n; i++)
        if (ch[i].kind == PERCEPT_CHANGE_UPDATE)
            ch[i].desc = &lw->descs[u++];
    int rc = percept_tick(w, ch, (size_t)n);
    if (rc < 0) {
        size_t bad = percept_errindex(w);
        if (bad != SIZE_MAX)
            return luaL_error(L, "%s (tick entry %d)", percept_errmsg(w), (int)bad + 1);
        check(L, w, rc);
    }
    return 0;
}

/* w:emit{sense = NAME, x =, y =, z =, strength =, source = ID, tags =} */
static int l_emit(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    lua_getfield(L, 2, "sense");
    st.sense = check_sense(L, w, -1);
    st.x = field_number(L, 2, "x", 0);
    st.y = field_number(L, 2, "y", 0);
    st.z = field_number(L, 2, "z", 0);
    st.strength = field_number(L, 2, "strength", 0);
    st.tags = (uint32_t)field_number(L, 2, "tags", 0);
    if (lua_getfield(L, 2, "source") != LUA_TNIL) {
        st.has_source = 1;
        st.source = check_id(L, -1);
    }
    check(L, w, percept_emit(w, &st));
    return 0;
}

/* One event as a table {kind =, observer =, target =, sense =, x =, y =, z =}
 * (target nil for a stimulus without a source). */
static void push_event(lua_State *L, percept_world *w, const percept_event *e)
{
    lua_createtable(L, 0, 7);
    lua_pushstring(L, kinds[e->kind]);
    lua_setfield(L, -2, "kind");
    lua_pushinteger(L, e->observer);
    lua_setfield(L, -2, "observer");
    if (e->has_source) {
        lua_pushinteger(L, e->target);
        lua_setfield(L, -2, "target");
    }
    lua_pushstring(L, percept_sense_name(w, e->sense));
    lua_setfield(L, -2, "sense");
    lua_pushnumber(L, e->x);
    lua_setfield(L, -2, "x");
    lua_pushnumber(L, e->y);
    lua_setfield(L, -2, "y");
    lua_pushnumber(L, e->z);
    lua_setfield(L, -2, "z");
}

/* w:event_list(): the last call's events, an array of tables. */
static int l_event_list(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    size_t n;
    const percept_event *ev = percept_events(w, &n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        push_event(L, w, &ev[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* The iterator of w:events(): index, kind, observer, target (nil for a
 * stimulus without a source), sense, x, y, z; no table per event. Its
 * upvalues are the world, then the names of the kinds and of the senses,
 * pushed from there: cheaper than a table lookup or hashing the string
 * again for each event. */
#define KIND_UPVALUE(kind) lua_upvalueindex(2 + (kind))
#define SENSE_UPVALUE(sense) lua_upvalueindex(6 + (sense))
static int events_next(lua_State *L)
{
    lworld *lw = lua_touserdata(L, lua_upvalueindex(1));
    if (!lw->w)
        return luaL_error(L, "percept: the world is closed");
    lua_Integer i = lua_tointeger(L, 2);
    size_t n;
    const percept_event *ev = percept_events(lw->w, &n);
    if (i < 0 || (size_t)i >= n)
        return 0;
    const percept_event *e = &ev[i];
    lua_pushinteger(L, i + 1);
    lua_pushvalue(L, KIND_UPVALUE(e->kind));
    lua_pushinteger(L, e->observer);
    if (e->has_source)
        lua_pushinteger(L, e->target);
    else
        lua_pushnil(L);
    lua_pushvalue(L, SENSE_UPVALUE(e->sense));
    lua_pushnumber(L, e->x);
    lua_pushnumber(L, e->y);
    lua_pushnumber(L, e->z);
    return 8;
}

/* for i, kind, observer, target, sense, x, y, z in w:events() do ... end */
static int l_events(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    lua_pushvalue(L, 1);
    for (int k = 0; k < 4; k++)
        lua_pushstring(L, kinds[k]);
    int senses = percept_sense_count(w);
    for (int s = 0; s < senses; s++)
        lua_pushstring(L, percept_sense_name(w, s));
    lua_pushcclosure(L, events_next, 1 + 4 + senses);
    lua_pushnil(L);
    lua_pushinteger(L, 0);
    return 3;
}

static int l_perceives(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    int rc = percept_perceives(w, check_id(L, 2), check_id(L, 3), check_sense(L, w, 4));
    if (rc < 0)
        return luaL_error(L, "percept: perceives: %s", percept_strerror(rc));
    lua_pushboolean(L, rc == 1);
    return 1;
}

/* w:perceived(id, sense): the IDs it perceives, ascending. */
static int l_perceived(lua_State *L)
{
    percept_world *w = check_world(L, 1);
    percept_id id = check_id(L, 2);
    percept_sense s = check_sense(L, w, 3);
    size_t n = 0;
    int rc = percept_perceived(w, id, s, NULL, 0, &n);
    percept_id *ids = lua_newuserdatauv(L, n * sizeof *ids + 1, 0);
    if (rc == PERCEPT_OK)
        rc = percept_perceived(w, id, s, ids, n, &n);
    if (rc < 0)
        return luaL_error(L, "percept: perceived: %s", percept_strerror(rc));
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, ids[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int l_count(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)percept_entity_count(check_world(L, 1)));
    return 1;
}

static const luaL_Reg world_methods[] = {
    {"add", l_add},
    {"update", l_update},
    {"move", l_move},
    {"turn", l_turn},
    {"remove", l_remove},
    {"set_range", l_set_range},
    {"set_hidden", l_set_hidden},
    {"tick", l_tick},
    {"emit", l_emit},
    {"events", l_events},
    {"event_list", l_event_list},
    {"perceives", l_perceives},
    {"perceived", l_perceived},
    {"count", l_count},
    {"close", l_close},
    {NULL, NULL},
};

/* The module's entry point, called by require "percept". */
LUAMOD_API int luaopen_percept(lua_State *L);
LUAMOD_API int luaopen_percept(lua_State *L)
{
    luaL_newmetatable(L, WORLD);
    luaL_newlib(L, world_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, l_open);
    lua_setfield(L, -2, "open");
    lua_pushstring(L, percept_version());
    lua_setfield(L, -2, "version");
    return 1;
}
