// cxx_header.cpp - percept.h and percept/backend.h from C++, as game servers
// written in C++ include them: every type and macro a program uses, the
// callback as a captureless lambda, the initialisers of the structs a
// program fills, and a backend's ops table defined in C++. Built by
// cxx-header.test with -Wall -Wextra -Werror -pedantic for several
// standards; run, it prints the events of a small scene.
#include <percept.h>
#include <percept/backend.h>

#include <cstdio>
#include <vector>

namespace {

// A backend written in C++ compiles against the ABI header: a table of
// functions with C linkage types, filled in order.
extern "C" percept_backend *cxx_create(const percept_backend_setup *, percept_backend_error *e)
{
    e->param_index = -1;
    return nullptr;
}
const percept_backend_ops cxx_ops = {
    PERCEPT_BACKEND_ABI_VERSION,
    static_cast<uint32_t>(sizeof(percept_backend_ops)),
    "cxx",
    "a table defined in C++",
    cxx_create,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    PERCEPT_BACKEND_QUERY_LOCAL,
};

struct recorder {
    std::vector<percept_event> events;
};

} // namespace

int main()
{
    static_assert(PERCEPT_MAX_SENSES == 8, "eight senses at most");
    static_assert(sizeof(percept_id) == 4, "32-bit IDs");
    if (cxx_ops.struct_size < PERCEPT_BACKEND_OPS_MIN_SIZE)
        return 2;

    percept_options opt = PERCEPT_OPTIONS_INIT;
    opt.backend = "bruteforce";
    percept_error err{};
    percept_world *w = nullptr;
    if (percept_world_open_string(&w, "", "cxx_header", &opt, &err) != PERCEPT_OK) {
        std::printf("open: %s (%s)\n", err.text, percept_status_name(err.status));
        return 1;
    }
    recorder log;
    percept_set_event_callback(
        w, [](void *user, const percept_event *e) { static_cast<recorder *>(user)->events.push_back(*e); },
        &log);

    percept_entity_desc guard = PERCEPT_ENTITY_DESC_INIT;
    guard.facing[0] = 1;
    guard.sense[PERCEPT_SIGHT].range = 10;
    guard.sense[PERCEPT_SIGHT].fov = 90;
    guard.sense[PERCEPT_HEARING].range = 4;
    guard.sense[PERCEPT_HEARING].ignore = 0x4;
    percept_entity_desc thief = PERCEPT_ENTITY_DESC_INIT;
    thief.x = 6;
    thief.sense[PERCEPT_SIGHT].range = 8;
    thief.hidden = PERCEPT_SENSE_BIT(PERCEPT_SIGHT);
    int rc = percept_add(w, 1, &guard);
    if (rc == PERCEPT_OK)
        rc = percept_add(w, 2, &thief);
    if (rc == PERCEPT_OK)
        rc = percept_move(w, 2, 3, 0);
    const percept_change batch[] = {{2, PERCEPT_CHANGE_MOVE, 40, 0, 0, NULL},
                                    {1, PERCEPT_CHANGE_MOVE, 0, 1, 0, NULL}};
    if (rc == PERCEPT_OK)
        rc = percept_tick(w, batch, sizeof batch / sizeof batch[0]);
    if (rc == PERCEPT_OK)
        rc = percept_turn(w, 1, 0, 1, 0);
    if (rc == PERCEPT_OK)
        rc = percept_move3(w, 2, 0, 3, 1);
    percept_stimulus noise = PERCEPT_STIMULUS_INIT;
    noise.sense = percept_sense_index(w, "hearing");
    noise.y = 2;
    noise.has_source = 1;
    noise.source = 2;
    if (rc == PERCEPT_OK)
        rc = percept_emit(w, &noise);
    if (rc == PERCEPT_OK)
        rc = percept_get_entity(w, 2, &thief);
    thief.tags = 0x4;
    if (rc == PERCEPT_OK)
        rc = percept_update(w, 2, &thief);
    percept_memory mem{};
    if (rc == PERCEPT_OK)
        rc = percept_memory_usage(w, &mem);
    if (rc != PERCEPT_OK || percept_sense_count(w) != 3) {
        std::printf("%s: %s\n", percept_status_name(rc), percept_errmsg(w));
        percept_world_close(w);
        return 1;
    }

    static const char *const kind[] = {"enter", "leave", "move", "stimulus"};
    for (const percept_event &e : log.events)
        std::printf("%u %u %s %s\n", static_cast<unsigned>(e.observer),
                    static_cast<unsigned>(e.target), percept_sense_name(w, e.sense),
                    kind[static_cast<int>(e.kind)]);
    percept_world_close(w);
    return mem.total > 0 ? 0 : 1;
}
