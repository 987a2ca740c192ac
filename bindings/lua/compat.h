/*
 * compat.h - the calls of Lua 5.4's C API that percept_lua.c uses and
 * LuaJIT (the API of Lua 5.1) lacks, made of what it has, so that one
 * source builds the module for both.
 */
#ifndef PERCEPT_LUA_COMPAT_H
#define PERCEPT_LUA_COMPAT_H

#include <lauxlib.h>
#include <lua.h>

#if LUA_VERSION_NUM < 503
/* Lua 5.3's lua_getfield() and lua_geti() return the type they pushed. */
static inline int compat_getfield(lua_State *L, int t, const char *key)
{
    lua_getfield(L, t, key);
    return lua_type(L, -1);
}

static inline int lua_geti(lua_State *L, int t, lua_Integer i)
{
    t = t < 0 && t > LUA_REGISTRYINDEX ? lua_gettop(L) + t + 1 : t;
    lua_pushinteger(L, i);
    lua_gettable(L, t);
    return lua_type(L, -1);
}

#define lua_getfield(L, t, key) compat_getfield(L, t, key)
#define lua_newuserdatauv(L, size, nuv) lua_newuserdata(L, size)
#define luaL_len(L, t) ((lua_Integer)lua_objlen(L, t))
#endif

#ifndef LUAMOD_API
#define LUAMOD_API LUALIB_API
#endif

#endif
