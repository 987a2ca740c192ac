/*
 * testutil.c - helpers shared by the API test suites: the backend list, opening
 * worlds, recording events and comparing them, and snapshots of a world's state.
 */
#include "testutil.h"

#include <dirent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Backends under test                                                       */

#define TU_MAX_BACKENDS 32

static char backend_text[1024];
static const char *backend_names[TU_MAX_BACKENDS];
static size_t backend_total;
static int backends_parsed;

/* Every NAME.so in the first directory of PERCEPT_PLUGIN_PATH, space separated, into
 * backend_text; 0 when there is none. */
static size_t plugins_in_path(void)
{
    const char *path = getenv("PERCEPT_PLUGIN_PATH");
    if (path == NULL || *path == '\0')
        return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", (int)strcspn(path, ":"), path);
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t used = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0 && used + n + 1 < sizeof backend_text)
            used += (size_t)snprintf(backend_text + used, sizeof backend_text - used, "%s%.*s",
                                     used ? " " : "", (int)(n - 3), e->d_name);
    }
    closedir(d);
    return used;
}

static void parse_backends(void)
{
    const char *env = getenv("PERCEPT_TEST_BACKENDS");
    char *p;

    if (backends_parsed)
        return;
    backends_parsed = 1;
    const char *source = "PERCEPT_TEST_BACKENDS";
    if (env != NULL && strspn(env, " \t\n") != strlen(env))
        snprintf(backend_text, sizeof backend_text, "%s", env);
    else if (plugins_in_path() != 0)
        source = "the first directory of PERCEPT_PLUGIN_PATH";
    else {
        snprintf(backend_text, sizeof backend_text, "%s", "bruteforce");
        source = "no PERCEPT_TEST_BACKENDS, and no NAME.so in the first directory of "
                 "PERCEPT_PLUGIN_PATH: the fallback";
    }
    /* Say which backends run, so that a test of one plugin cannot pass by
     * quietly testing another. */
    fprintf(stderr, "backends under test: %s (from %s)\n", backend_text, source);
    p = backend_text;
    while (*p != '\0' && backend_total < TU_MAX_BACKENDS) {
        p += strspn(p, " \t\n");
        if (*p == '\0')
            break;
        backend_names[backend_total++] = p;
        p += strcspn(p, " \t\n");
        if (*p != '\0')
            *p++ = '\0';
    }
}

size_t tu_backend_count(void)
{
    parse_backends();
    return backend_total;
}

const char *tu_backend_name(size_t index)
{
    parse_backends();
    return index < backend_total ? backend_names[index] : NULL;
}

static const char *backend_now;

void tu_for_each_backend(void (*fn)(const char *backend))
{
    size_t n = tu_backend_count();
    for (size_t i = 0; i < n; i++) {
        backend_now = tu_backend_name(i);
        fn(backend_now);
    }
    backend_now = NULL;
}

int tu_report_backend(void **state)
{
    (void)state;
    if (backend_now != NULL) {
        print_error("  (failed with backend '%s')\n", backend_now);
        backend_now = NULL;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Event recording                                                           */

void tu_recorder_init(tu_recorder *rec)
{
    rec->events = NULL;
    rec->count = 0;
    rec->capacity = 0;
}

void tu_recorder_clear(tu_recorder *rec)
{
    rec->count = 0;
}

void tu_recorder_free(tu_recorder *rec)
{
    free(rec->events);
    tu_recorder_init(rec);
}

void tu_recorder_push(tu_recorder *rec, const percept_event *event)
{
    if (rec->count == rec->capacity) {
        size_t cap = rec->capacity ? rec->capacity * 2 : 64;
        percept_event *grown = realloc(rec->events, cap * sizeof *grown);
        if (grown == NULL) {
            /* The callback has no way to report failure, and a lost event would
             * make a later comparison lie. */
            fprintf(stderr, "testutil: out of memory recording events\n");
            abort();
        }
        rec->events = grown;
        rec->capacity = cap;
    }
    rec->events[rec->count++] = *event;
}

void tu_record(void *user, const percept_event *event)
{
    tu_recorder_push((tu_recorder *)user, event);
}

int tu_apply(percept_world *w, const tu_op *o)
{
    switch (o->kind) {
    case TU_ADD:
        return percept_add(w, o->id, &o->desc);
    case TU_MOVE:
        return percept_move(w, o->id, o->x, o->y);
    case TU_REMOVE:
        return percept_remove(w, o->id);
    case TU_RANGE:
        return percept_set_range(w, o->id, o->sense, o->value);
    case TU_HIDE:
        return percept_set_hidden(w, o->id, o->sense, o->value != 0);
    }
    return PERCEPT_EINVAL;
}

/* ------------------------------------------------------------------------ */
/* Worlds                                                                    */

percept_world *tu_open(const char *backend, const char *extra_ini, tu_recorder *rec)
{
    return tu_open_faulty(backend, extra_ini, rec, NULL);
}

percept_world *tu_open_faulty(const char *backend, const char *extra_ini, tu_recorder *rec,
                              tu_fault_alloc *fa)
{
    char ini[4096];
    percept_world *world = NULL;
    percept_error error;
    percept_allocator allocator = {tu_fault_fn, fa};
    percept_options options = PERCEPT_OPTIONS_INIT;
    int rc;

    memset(&error, 0, sizeof error);
    options.allocator = &allocator;
    snprintf(ini, sizeof ini, "[percept]\nbackend = %s\n%s", backend,
             extra_ini != NULL ? extra_ini : "");
    rc = percept_world_open_string(&world, ini, "<test>", fa ? &options : NULL, &error);
    if (rc != PERCEPT_OK || world == NULL) {
        print_error("cannot open a world with backend '%s': status %d (%s): %s\n", backend, rc,
                    percept_status_name(rc) ? percept_status_name(rc) : "?", error.text);
        print_error("config was:\n%s\n", ini);
        fail();
    }
    if (rec != NULL)
        assert_int_equal(percept_set_event_callback(world, tu_record, rec), PERCEPT_OK);
    return world;
}

percept_id tu_spread_id(uint32_t i)
{
    if (i == 0)
        return 0;
    if (i == 1)
        return UINT32_MAX;
    uint32_t x = i * 2654435761u;
    x ^= x >> 15;
    /* The bijection could land on 0 or UINT32_MAX: keep those for i 0 and 1. */
    return x == 0 || x == UINT32_MAX ? 0x7FFFFFFFu - i : x;
}

percept_entity_desc tu_desc(double x, double y, double sight, double hearing, double smell,
                            unsigned hidden)
{
    percept_entity_desc d;
    memset(&d, 0, sizeof d);
    d.x = x;
    d.y = y;
    d.range[PERCEPT_SIGHT] = sight;
    d.range[PERCEPT_HEARING] = hearing;
    d.range[PERCEPT_SMELL] = smell;
    d.hidden = hidden;
    return d;
}

void tu_add(percept_world *world, percept_id id, percept_entity_desc desc)
{
    int rc = percept_add(world, id, &desc);
    if (rc != PERCEPT_OK) {
        print_error("percept_add(%u, (%.17g, %.17g)) returned %d: %s\n", (unsigned)id, desc.x,
                    desc.y, rc, percept_errmsg(world));
        fail();
    }
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

percept_event tu_ev(percept_event_kind kind, percept_id observer, percept_id target,
                    percept_sense sense, double x, double y)
{
    percept_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.sense = sense;
    e.observer = observer;
    e.target = target;
    e.x = x;
    e.y = y;
    return e;
}

int tu_event_cmp(const void *a, const void *b)
{
    const percept_event *x = a, *y = b;
    if (x->observer != y->observer)
        return x->observer < y->observer ? -1 : 1;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    if (x->sense != y->sense)
        return (int)x->sense < (int)y->sense ? -1 : 1;
    if (x->kind != y->kind)
        return (int)x->kind < (int)y->kind ? -1 : 1;
    return 0;
}

void tu_sort_events(percept_event *events, size_t count)
{
    if (count > 1)
        qsort(events, count, sizeof *events, tu_event_cmp);
}

static const char *kind_name(percept_event_kind kind)
{
    switch (kind) {
    case PERCEPT_ENTER:
        return "enter";
    case PERCEPT_LEAVE:
        return "leave";
    case PERCEPT_MOVE:
        return "move";
    }
    return "?kind";
}

void tu_format_event(char *buf, size_t size, const percept_event *e)
{
    const char *sense = percept_sense_name(e->sense);
    snprintf(buf, size, "%u %u %s %s (%.17g, %.17g)", (unsigned)e->observer, (unsigned)e->target,
             sense != NULL ? sense : "?sense", kind_name(e->kind), e->x, e->y);
}

void tu_print_events(const char *title, const percept_event *events, size_t count)
{
    char line[160];
    print_error("  %s (%zu):\n", title, count);
    for (size_t i = 0; i < count; i++) {
        tu_format_event(line, sizeof line, &events[i]);
        print_error("    [%zu] %s\n", i, line);
    }
}

static int same_event(const percept_event *a, const percept_event *b)
{
    /* Positions are compared exactly: they are copies of the caller's doubles. */
    return a->kind == b->kind && a->sense == b->sense && a->observer == b->observer &&
           a->target == b->target && a->x == b->x && a->y == b->y;
}

int tu_events_match(const tu_recorder *rec, const percept_event *expected, size_t count,
                    const char *what)
{
    int ok = rec->count == count;
    for (size_t i = 0; ok && i < count; i++)
        ok = same_event(&rec->events[i], &expected[i]);
    if (!ok) {
        print_error("event mismatch: %s\n", what);
        tu_print_events("expected", expected, count);
        tu_print_events("delivered", rec->events, rec->count);
    }
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */

size_t tu_list(const percept_world *world, percept_id id, percept_sense sense, int by_target,
               percept_id *ids, size_t cap)
{
    size_t count = (size_t)-1;
    int rc = by_target ? percept_perceived_by(world, id, sense, ids, cap, &count)
                       : percept_perceived(world, id, sense, ids, cap, &count);
    if (rc != PERCEPT_OK) {
        print_error("%s(%u, %d) returned %d\n",
                    by_target ? "percept_perceived_by" : "percept_perceived", (unsigned)id,
                    (int)sense, rc);
        fail();
    }
    if (count > cap) {
        print_error("list of %u (sense %d) has %zu entries, more than the %zu expected at most\n",
                    (unsigned)id, (int)sense, count, cap);
        fail();
    }
    return count;
}

int tu_list_matches(const percept_world *world, percept_id id, percept_sense sense, int by_target,
                    const percept_id *expected, size_t count)
{
    percept_id got[256];
    size_t n = tu_list(world, id, sense, by_target, got, 256);
    int ok = n == count;
    for (size_t i = 0; ok && i < n; i++)
        ok = got[i] == expected[i];
    if (!ok) {
        const char *sn = percept_sense_name(sense);
        print_error("%s of %u by %s:\n", by_target ? "perceived_by" : "perceived", (unsigned)id,
                    sn != NULL ? sn : "?");
        print_error("  expected:");
        for (size_t i = 0; i < count; i++)
            print_error(" %u", (unsigned)expected[i]);
        print_error("\n  got:     ");
        for (size_t i = 0; i < n; i++)
            print_error(" %u", (unsigned)got[i]);
        print_error("\n");
    }
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */

static void snap_push(tu_snapshot *snap, uint64_t word)
{
    if (snap->count == snap->capacity) {
        size_t cap = snap->capacity ? snap->capacity * 2 : 256;
        uint64_t *grown = realloc(snap->words, cap * sizeof *grown);
        assert_non_null(grown);
        snap->words = grown;
        snap->capacity = cap;
    }
    snap->words[snap->count++] = word;
}

static void snap_push_double(tu_snapshot *snap, double v)
{
    uint64_t w;
    memcpy(&w, &v, sizeof w);
    snap_push(snap, w);
}

static void snap_push_list(tu_snapshot *snap, const percept_world *world, percept_id id,
                           percept_sense sense, int by_target)
{
    percept_id ids[1024];
    size_t n = tu_list(world, id, sense, by_target, ids, 1024);
    snap_push(snap, n);
    for (size_t i = 0; i < n; i++)
        snap_push(snap, ids[i]);
}

void tu_snapshot_take(const percept_world *world, const percept_id *ids, size_t n,
                      tu_snapshot *snap)
{
    snap->words = NULL;
    snap->count = 0;
    snap->capacity = 0;
    snap_push(snap, percept_entity_count(world));
    for (size_t i = 0; i < n; i++) {
        percept_entity_desc d;
        int in = percept_contains(world, ids[i]);
        snap_push(snap, ids[i]);
        snap_push(snap, (uint64_t)in);
        if (!in)
            continue;
        memset(&d, 0, sizeof d);
        assert_int_equal(percept_get_entity(world, ids[i], &d), PERCEPT_OK);
        snap_push_double(snap, d.x);
        snap_push_double(snap, d.y);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            snap_push_double(snap, d.range[s]);
        snap_push(snap, d.hidden);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            snap_push_list(snap, world, ids[i], (percept_sense)s, 0);
            snap_push_list(snap, world, ids[i], (percept_sense)s, 1);
        }
    }
}

int tu_snapshot_equal(const tu_snapshot *a, const tu_snapshot *b, const char *what)
{
    size_t n = a->count < b->count ? a->count : b->count;
    for (size_t i = 0; i < n; i++) {
        if (a->words[i] != b->words[i]) {
            print_error("world state changed (%s): first difference at word %zu: %llu vs %llu\n",
                        what, i, (unsigned long long)a->words[i], (unsigned long long)b->words[i]);
            return 0;
        }
    }
    if (a->count != b->count) {
        print_error("world state changed (%s): %zu vs %zu words\n", what, a->count, b->count);
        return 0;
    }
    return 1;
}

void tu_snapshot_free(tu_snapshot *snap)
{
    free(snap->words);
    snap->words = NULL;
    snap->count = 0;
    snap->capacity = 0;
}

/* ------------------------------------------------------------------------ */
/* A failing allocator                                                       */

#define BLOCK_MAGIC 0x70657263656c6c6fULL

/* Each block carries its size (to tell growth from shrinking) and a magic word. */
typedef union block_header {
    max_align_t align;
    struct {
        size_t size;
        unsigned long long magic;
    } h;
} block_header;

void *tu_fault_fn(void *user, void *ptr, size_t size)
{
    tu_fault_alloc *fa = user;
    block_header *h = ptr != NULL ? (block_header *)ptr - 1 : NULL;
    if (h != NULL && h->h.magic != BLOCK_MAGIC) {
        fa->foreign_frees++;
        return NULL;
    }
    if (size == 0) {
        if (h != NULL) {
            fa->live_blocks--;
            fa->live_bytes -= h->h.size;
            h->h.magic = 0;
            free(h);
        }
        return NULL;
    }
    size_t old = h != NULL ? h->h.size : 0;
    if (h != NULL && size < old) {
        fa->shrinks++;
        if (fa->refuse_shrinks)
            return NULL;
    }
    if (h == NULL || size > old) {
        /* Only new blocks and growth are counted, and may fail. */
        ++fa->counted;
        if (fa->fail_at != 0 &&
            (fa->counted == fa->fail_at || (fa->sticky && fa->counted > fa->fail_at))) {
            fa->hit = 1;
            return NULL;
        }
    }
    if (size > (size_t)-1 - sizeof(block_header))
        return NULL;
    block_header *n = realloc(h, sizeof *n + size);
    if (n == NULL)
        return NULL;
    if (h == NULL) {
        fa->live_blocks++;
        n->h.magic = BLOCK_MAGIC;
    }
    fa->live_bytes = fa->live_bytes - old + size;
    n->h.size = size;
    return n + 1;
}

void tu_fault_init(tu_fault_alloc *fa)
{
    memset(fa, 0, sizeof *fa);
}

void tu_expect_no_leak(const tu_fault_alloc *fa, const char *what)
{
    if (fa->live_blocks != 0 || fa->live_bytes != 0 || fa->foreign_frees != 0) {
        print_error("%s: %zu block(s), %zu byte(s) still allocated, %zu foreign free(s)\n", what,
                    fa->live_blocks, fa->live_bytes, fa->foreign_frees);
        fail();
    }
}

void tu_copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    assert_int_equal(ferror(in), 0);
    assert_int_equal(fclose(in), 0);
    assert_int_equal(fclose(out), 0);
}
