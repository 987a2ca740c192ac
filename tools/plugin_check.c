/*
 * plugin_check.c - the conformance checks of a backend plugin (see
 * plugin_check.h), each on fresh instances over a host allocator that
 * counts, poisons and fails on request, with every query compared with a
 * model of the index: all within the distance visited, none outside it.
 */
#include "plugin_check.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitmix.h"

#define MAX_SLOTS 4096 /* the highest slot any check uses, plus one */

const pc_plugin *pc_current;
const char *pc_current_check;

int pc_plugin_name(pc_plugin *p, const char *path)
{
    memset(p, 0, sizeof *p);
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    size_t len = strlen(base);
    if (strlen(path) >= sizeof p->path || len <= 3 || len - 3 >= sizeof p->name ||
        strcmp(base + len - 3, ".so") != 0) {
        snprintf(p->load_error, sizeof p->load_error, "not a plugin file name: expected NAME.so");
        return -1;
    }
    strcpy(p->path, path);
    memcpy(p->name, base, len - 3);
    return 0;
}

int pc_plugin_load(pc_plugin *p, const char *path)
{
    if (pc_plugin_name(p, path) != 0)
        return -1;
    /* dlopen() searches the library path for a name without a slash. */
    char where[sizeof p->path + 2];
    snprintf(where, sizeof where, "%s%s", strchr(path, '/') ? "" : "./", path);
    void *handle = dlopen(where, RTLD_NOW | RTLD_LOCAL);
    void *sym = handle != NULL ? dlsym(handle, PERCEPT_BACKEND_ENTRY_SYMBOL) : NULL;
    if (sym == NULL) {
        const char *e = dlerror();
        snprintf(p->load_error, sizeof p->load_error, "%s", e != NULL ? e : "no entry function");
        return -1;
    }
    percept_backend_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object to function pointer, as POSIX allows */
    p->ops = entry();
    if (p->ops == NULL)
        snprintf(p->load_error, sizeof p->load_error, "the entry function returned no table");
    return p->ops != NULL ? 0 : -1;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports one failure, naming the backend and the check; returns -1. */
static int fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "backend '%s' fails %s: ", pc_current != NULL ? pc_current->name : "?",
            pc_current_check != NULL ? pc_current_check : "?");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return fail(__VA_ARGS__);                                                              \
    } while (0)

/* Passes on the failure of a helper that reported it already. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((expr) != 0)                                                                           \
            return -1;                                                                             \
    } while (0)

/* Each block starts with its size, so that growth can be filled with garbage. */
typedef union block {
    max_align_t align;
    size_t size;
} block;

typedef struct counting_host {
    percept_backend_host host;
    size_t calls;      /* every call, frees included */
    size_t grows;      /* requests for a new or larger block, granted or not */
    size_t live_bytes; /* the sizes of the blocks held */
    long live;         /* blocks held */
    long fail_after;   /* < 0: never fail; else this many more requests succeed */
    int fail_pct;      /* also refuse this share of requests, at random */
    uint64_t rng;
} counting_host;

static void *counting_alloc(void *user, void *ptr, size_t size)
{
    counting_host *h = user;
    block *old = ptr != NULL ? (block *)ptr - 1 : NULL;

    size_t old_size = old != NULL ? old->size : 0;
    h->calls++;
    if (size == 0) {
        if (old != NULL) {
            h->live_bytes -= old_size;
            h->live--;
            memset(old, 0x5a, sizeof *old + old_size); /* a use after free reads garbage */
            free(old);
        }
        return NULL;
    }
    if (size > old_size)
        h->grows++;
    if (h->fail_after == 0 || size > SIZE_MAX - sizeof *old ||
        (h->fail_pct > 0 && (int)(splitmix_next(&h->rng) % 100) < h->fail_pct))
        return NULL;
    if (h->fail_after > 0)
        h->fail_after--;
    block *p = realloc(old, sizeof *p + size);
    if (p == NULL)
        return NULL;
    if (old == NULL)
        h->live++;
    if (size > old_size) /* new memory is never zero by luck */
        memset((char *)(p + 1) + old_size, 0xa5, size - old_size);
    h->live_bytes = h->live_bytes - old_size + size;
    p->size = size;
    return p + 1;
}

typedef struct inst {
    const pc_plugin *b;
    counting_host host;
    percept_backend *be;
    uint32_t slot_count; /* 1 + the highest slot used, as the host would say */
    unsigned live;       /* slots in the index */
    double x[MAX_SLOTS], y[MAX_SLOTS], z[MAX_SLOTS];
    unsigned char in[MAX_SLOTS]; /* the slot is in the index */
    uint32_t hits[MAX_SLOTS];    /* the last query's visits per slot */
    size_t stray;                /* visits of slots >= MAX_SLOTS */
    percept_slot stray_slot;
} inst;

static const double default_bounds[4] = {0, 0, 1000, 1000};

static void visit(void *ctx, percept_slot slot)
{
    inst *t = ctx;
    if (slot < MAX_SLOTS)
        t->hits[slot]++;
    else
        t->stray_slot = slot, t->stray++;
}

static inst *inst_new(const pc_plugin *b)
{
    inst *t = calloc(1, sizeof *t);
    if (t == NULL)
        abort();
    t->b = b;
    t->host.host.alloc = counting_alloc;
    t->host.host.user = &t->host;
    t->host.fail_after = -1;
    t->host.rng = 12345;
    return t;
}

/* create() over bounds w with these parameters; the instance or NULL (*err filled). */
static percept_backend *create(inst *t, const double *w, const percept_backend_param *params,
                               size_t count, percept_backend_error *err)
{
    percept_backend_setup setup = {&t->host.host, w[0], w[1], w[2], w[3], params, count};
    memset(err, 0, sizeof *err);
    err->param_index = 12345; /* create() must set it on failure */
    t->be = t->b->ops->create(&setup, err);
    err->text[sizeof err->text - 1] = '\0';
    return t->be;
}

/* An instance with the plugin's parameters over bounds w (NULL: 0 0 1000
 * 1000), or NULL after reporting that create() refused. */
static inst *inst_open(const pc_plugin *b, const double *w)
{
    percept_backend_error err;
    inst *t = inst_new(b);
    w = w != NULL ? w : default_bounds;
    if (create(t, w, b->params, b->param_count, &err) == NULL) {
        fail("create() with %zu parameter(s) over bounds %.17g %.17g %.17g %.17g failed: %s",
             b->param_count, w[0], w[1], w[2], w[3], err.text);
        free(t);
        return NULL;
    }
    return t;
}

#define OPEN(t, w)                                                                                 \
    inst *t = inst_open(b, w);                                                                     \
    if (t == NULL)                                                                                 \
    return -1

/* destroy(), after which every block the backend took must be given back. */
static int inst_close(inst *t)
{
    if (t->be != NULL)
        t->b->ops->destroy(t->be);
    long live = t->host.live;
    free(t);
    CHECK(live == 0, "destroy() left %ld block(s) of the host allocator unfreed", live);
    return 0;
}

/* reserve(): 0, -1 when out of memory, or -2 after reporting another value. */
static int reserve(inst *t, uint32_t slot_count, percept_slot slot, double x, double y, double z,
                   double r)
{
    int rc = t->b->ops->reserve(t->be, slot_count, slot, x, y, z, r);
    if (rc != 0 && rc != -1)
        return fail("reserve() returned %d, not 0 or -1", rc) - 1;
    return rc;
}

/* insert() (or update(), for a slot in the index) after a reserve() that
 * succeeded: it must not ask the host for memory, or it could fail half made. */
static int apply(inst *t, percept_slot slot, double x, double y, double z, double r)
{
    const char *op = t->in[slot] ? "update" : "insert";
    size_t grows = t->host.grows;
    (t->in[slot] ? t->b->ops->update : t->b->ops->insert)(t->be, slot, x, y, z, r);
    CHECK(t->host.grows == grows,
          "%s(slot %u, %.17g, %.17g, %.17g, %.17g) asked host->alloc for memory: reserve() must "
          "prepare all it needs",
          op, (unsigned)slot, x, y, z, r);
    t->slot_count = slot + 1 > t->slot_count ? slot + 1 : t->slot_count;
    t->live += !t->in[slot];
    t->in[slot] = 1;
    t->x[slot] = x, t->y[slot] = y, t->z[slot] = z;
    return 0;
}

/* Inserts or updates `slot` with a working allocator. */
static int put(inst *t, percept_slot slot, double x, double y, double z, double r)
{
    uint32_t count = slot + 1 > t->slot_count ? slot + 1 : t->slot_count;
    int rc = reserve(t, count, slot, x, y, z, r);
    TRY(rc == -2);
    CHECK(rc == 0,
          "reserve(%u, slot %u, %.17g, %.17g, %.17g, %.17g) failed with a working allocator",
          (unsigned)count, (unsigned)slot, x, y, z, r);
    return apply(t, slot, x, y, z, r);
}

static void do_remove(inst *t, percept_slot slot)
{
    t->b->ops->remove(t->be, slot);
    t->live -= t->in[slot];
    t->in[slot] = 0;
}

/* The plugin's memory_usage(), or NULL when it has none. */
static size_t (*usage_of(const pc_plugin *b))(const percept_backend *)
{
    const percept_backend_ops *o = b->ops;
    if (o->struct_size < offsetof(percept_backend_ops, memory_usage) + sizeof o->memory_usage)
        return NULL;
    return o->memory_usage;
}

/* memory_usage(), where the plugin has it, must be the bytes it holds. */
static int memory_exact(inst *t, const char *when)
{
    size_t (*usage)(const percept_backend *) = usage_of(t->b);
    if (usage == NULL)
        return 0;
    size_t calls = t->host.calls, reported = usage(t->be);
    CHECK(t->host.calls == calls, "memory_usage() called the host allocator");
    CHECK(reported == t->host.live_bytes,
          "memory_usage() reports %zu bytes %s, but the instance holds %zu from host->alloc",
          reported, when, t->host.live_bytes);
    return 0;
}

/* query(x, y, z, r) against the model: every slot within r visited, none
 * outside the index, no call of the host allocator. */
static int query_check(inst *t, double x, double y, double z, double r)
{
    memset(t->hits, 0, sizeof t->hits);
    t->stray = 0;
    size_t calls = t->host.calls;
    t->b->ops->query(t->be, x, y, z, r, visit, t);
    CHECK(t->host.calls == calls, "query(%.17g, %.17g, %.17g, %.17g) called the host allocator", x,
          y, z, r);
    CHECK(t->stray == 0,
          "query(%.17g, %.17g, %.17g, %.17g) visited slot %u, which was never inserted", x, y, z, r,
          (unsigned)t->stray_slot);
    for (uint32_t s = 0; s < MAX_SLOTS; s++) {
        /* the relation's test, as the host's */
        double dx = t->x[s] - x, dy = t->y[s] - y, dz = t->z[s] - z;
        CHECK(!t->in[s] || t->hits[s] > 0 || !(dx * dx + dy * dy + dz * dz <= r * r),
              "query(%.17g, %.17g, %.17g, %.17g) missed slot %u at (%.17g, %.17g, %.17g), within "
              "the distance",
              x, y, z, r, (unsigned)s, t->x[s], t->y[s], t->z[s]);
        CHECK(t->in[s] || t->hits[s] == 0,
              "query(%.17g, %.17g, %.17g, %.17g) visited slot %u, which is not in the index", x, y,
              z, r, (unsigned)s);
    }
    return 0;
}

/* A query that must visit `slot` (also where the exact test is a rounding away). */
static int query_must_see(inst *t, double x, double y, double z, double r, percept_slot slot)
{
    TRY(query_check(t, x, y, z, r));
    CHECK(t->hits[slot] > 0,
          "query(%.17g, %.17g, %.17g, %.17g) did not visit slot %u at (%.17g, %.17g, %.17g)", x, y,
          z, r, (unsigned)slot, t->x[slot], t->y[slot], t->z[slot]);
    return 0;
}

/* A query that must visit exactly n distinct slots. */
static int query_count(inst *t, double x, double y, double z, double r, unsigned n)
{
    unsigned seen = 0;
    TRY(query_check(t, x, y, z, r));
    for (uint32_t s = 0; s < MAX_SLOTS; s++)
        seen += t->hits[s] > 0;
    CHECK(seen == n, "query(%.17g, %.17g, %.17g, %.17g) visited %u distinct slots, expected %u", x,
          y, z, r, seen, n);
    return 0;
}

/* Every slot in the index is found at its own point. */
static int all_found(inst *t)
{
    for (percept_slot s = 0; s < MAX_SLOTS; s++)
        if (t->in[s])
            TRY(query_must_see(t, t->x[s], t->y[s], t->z[s], 0, s));
    return 0;
}

static uint64_t rnd_below(uint64_t *rng, uint64_t n)
{
    return splitmix_next(rng) % n;
}

/* A position around the bounds [0, w]: mostly uniform over twice the world,
 * sometimes on half units (shared edges), sometimes far away; at height 0
 * a third of the time, else at heights drawn alike. */
static void random_position(uint64_t *rng, double w, double *x, double *y, double *z)
{
    uint64_t k = rnd_below(rng, 100), h = rnd_below(rng, 90);
    *z = h < 30   ? 0
         : h < 70 ? -w + 2 * w * splitmix_unit(rng)
         : h < 85 ? (double)rnd_below(rng, (uint64_t)(4 * w) + 1) / 2 - w
                  : (splitmix_unit(rng) - 0.5) * 2e6;
    if (k < 60) {
        *x = -w / 2 + 2 * w * splitmix_unit(rng);
        *y = -w / 2 + 2 * w * splitmix_unit(rng);
    } else if (k < 90) {
        *x = (double)rnd_below(rng, (uint64_t)(4 * w) + 1) / 2 - w / 2;
        *y = (double)rnd_below(rng, (uint64_t)(4 * w) + 1) / 2 - w / 2;
    } else {
        *x = (splitmix_unit(rng) - 0.5) * 2e6;
        *y = (splitmix_unit(rng) - 0.5) * 2e6;
    }
}

/* A query radius from 0 to 5 * w / 16, sometimes whole, sometimes 0. */
static double random_radius(uint64_t *rng, double w)
{
    uint64_t k = rnd_below(rng, 100);
    if (k < 5)
        return 0;
    if (k < 40)
        return (double)rnd_below(rng, (uint64_t)(5 * w / 16) + 1);
    return splitmix_unit(rng) * 5 * w / 16;
}

/* Exact Pythagorean offsets (scaled onto the edges of common cell sizes):
 * at exactly that radius the exact test holds with no rounding. */
static const double tri[][3] = {{3, 4, 5},     {5, 12, 13},    {8, 15, 17},    {0, 7, 7},
                                {7, 0, 7},     {48, 64, 80},   {36, 48, 60},   {64, 0, 64},
                                {0, 128, 128}, {96, 128, 160}, {120, 160, 200}};
#define TRI_COUNT (sizeof tri / sizeof tri[0])

/* The same in three dimensions: dx, dy, dz and their exact distance. */
static const double quad[][4] = {{1, 2, 2, 3},     {2, 3, 6, 7},       {1, 4, 8, 9},
                                 {4, 4, 7, 9},     {2, 6, 9, 11},      {0, 0, 5, 5},
                                 {3, 0, 4, 5},     {0, 48, 64, 80},    {16, 32, 32, 48},
                                 {32, 64, 64, 96}, {64, 128, 128, 192}};
#define QUAD_COUNT (sizeof quad / sizeof quad[0])

/* The ops table is well formed and names the file it came from. */
static int table(const pc_plugin *b)
{
    const percept_backend_ops *o = b->ops;
    CHECK(o != NULL, "cannot be loaded: %s", b->load_error);
    CHECK(o->abi_version >> 16 == PERCEPT_BACKEND_ABI_MAJOR,
          "built for backend ABI %u.%u, but this percept has ABI %u.%u: rebuild it against this "
          "percept's <percept/backend.h>",
          (unsigned)(o->abi_version >> 16), (unsigned)(o->abi_version & 0xffff),
          (unsigned)PERCEPT_BACKEND_ABI_MAJOR, (unsigned)PERCEPT_BACKEND_ABI_MINOR);
    CHECK(o->struct_size >= PERCEPT_BACKEND_OPS_MIN_SIZE,
          "struct_size %u is smaller than the mandatory operations (%zu bytes)",
          (unsigned)o->struct_size, (size_t)PERCEPT_BACKEND_OPS_MIN_SIZE);
    CHECK(o->name != NULL && strcmp(o->name, b->name) == 0,
          "name '%s' is not the file's name '%s' (percept loads backend NAME from NAME.so)",
          o->name != NULL ? o->name : "(null)", b->name);
    const char *missing = !o->create    ? "create"
                          : !o->destroy ? "destroy"
                          : !o->reserve ? "reserve"
                          : !o->insert  ? "insert"
                          : !o->update  ? "update"
                          : !o->remove  ? "remove"
                          : !o->query   ? "query"
                                        : NULL;
    CHECK(missing == NULL, "the mandatory operation %s is NULL", missing);
    CHECK(usage_of(b) != NULL || !b->memory_required,
          "has no memory_usage(), which this run requires");
    return 0;
}

/* create(): defaults for any sensible bounds; an unknown key refused, blaming it. */
static int create_check(const pc_plugin *b)
{
    static const double bounds[][4] = {
        {0, 0, 1000, 1000}, {0, 0, 1024, 1024}, {-1000, -600, -500, 400}, {0.5, 0.25, 10.5, 1.75},
        {0, 0, 0, 0},       {-5, 7, -5, 7},     {0, 0, 100000, 10}};
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        const double *w = bounds[i];
        OPEN(t, w);
        /* Corners, the centre and a point outside. */
        TRY(put(t, 0, w[0], w[1], 0, 0));
        TRY(put(t, 1, w[2], w[3], 0, 1));
        TRY(put(t, 2, (w[0] + w[2]) / 2, (w[1] + w[3]) / 2, 0, 2));
        TRY(put(t, 3, w[2] + 50, w[1] - 50, 0, 3));
        TRY(all_found(t));
        TRY(query_count(t, w[0], w[1], 0, 1e9, 4));
        TRY(memory_exact(t, "after four inserts"));
        TRY(inst_close(t));
    }

    static const percept_backend_param unknown[] = {{"no_such_key", "1", 3}, {"another", "", 4}};
    for (size_t n = 1; n <= 2; n++) {
        percept_backend_error err;
        inst *t = inst_new(b);
        CHECK(create(t, default_bounds, unknown, n, &err) == NULL,
              "create() accepted the unknown key 'no_such_key'");
        CHECK(err.param_index == 0, "create() set param_index %d for an unknown key at index 0",
              err.param_index);
        /* The words docs/plugins.md asks for, as every shipped backend says. */
        CHECK(strstr(err.text, "unknown parameter") != NULL,
              "create() refused an unknown key with '%s', not 'unknown parameter'", err.text);
        TRY(inst_close(t));
    }
    return 0;
}

/* Small indexes: empty, one entity, a crowd on one point, radius 0 and
 * 1e9, slots removed and inserted again. */
static int small_cases(const pc_plugin *b)
{
    static const double empty_q[][3] = {{0, 0, 0}, {500, 500, 1e9}, {-1e6, 1e6, 10}};
    OPEN(t, NULL);
    for (size_t i = 0; i < 3; i++)
        TRY(query_count(t, empty_q[i][0], empty_q[i][1], 0, empty_q[i][2], 0));
    TRY(put(t, 0, 100, 100, 0, 10));
    TRY(query_must_see(t, 110, 100, 0, 10, 0));
    TRY(query_must_see(t, 100, 90, 0, 10, 0));
    TRY(query_count(t, 1000, 1000, 0, 1e9, 1));
    TRY(put(t, 0, 900, 50, 0, 10));
    TRY(query_must_see(t, 906, 58, 0, 10, 0));
    TRY(query_check(t, 100, 100, 0, 5)); /* the old place */
    TRY(put(t, 0, 900, 50, 0, 400));     /* a range change alone */
    TRY(query_must_see(t, 905, 50, 0, 5, 0));
    do_remove(t, 0);
    TRY(query_count(t, 900, 50, 0, 1e9, 0));

    /* 40 on one point, then half of them on another. */
    for (percept_slot s = 0; s < 40; s++)
        TRY(put(t, s, 250.5, 250.5, 0, s % 3 == 0 ? 0 : 20));
    TRY(query_count(t, 250.5, 250.5, 0, 0, 40));
    TRY(query_count(t, 253.5, 254.5, 0, 5, 40));
    TRY(query_count(t, 250.5 + 64, 250.5, 0, 64, 40));
    for (percept_slot s = 0; s < 40; s += 2)
        TRY(put(t, s, 0, 0, 0, 5));
    TRY(all_found(t));
    for (percept_slot s = 0; s < 40; s++)
        do_remove(t, (s * 7) % 40);
    TRY(query_count(t, 0, 0, 0, 1e9, 0));

    /* Radius 0 at odd places; radius 1e9 over a scattered crowd. */
    uint64_t rng = 77;
    for (percept_slot s = 0; s < 300; s++) {
        double x = (double)rnd_below(&rng, 4000) - 1500, y = (double)rnd_below(&rng, 4000) - 1500;
        TRY(put(t, s, s % 25 == 0 ? x * 500 : x, y, 0, (double)(s % 7) * 10));
    }
    TRY(put(t, 1, 10.5, 10, 0, 0));
    TRY(put(t, 2, 64, 64, 0, 0));
    TRY(put(t, 3, 333.25, 0.125, 0, 0));
    TRY(all_found(t));
    TRY(query_count(t, 500, 500, 0, 1e9, 300));
    TRY(query_count(t, -1e5, 3e5, 0, 1e9, 300));

    /* Removed slots are never reported; a slot inserted again is found anew. */
    do_remove(t, 3);
    do_remove(t, 7);
    TRY(query_check(t, 333.25, 0.125, 0, 0));
    TRY(put(t, 3, 900, 100, 0, 20));
    TRY(put(t, 300, 333.25, 0.125, 0, 0)); /* a new slot where the old one stood */
    TRY(query_must_see(t, 333.25, 0.125, 0, 0, 300));
    TRY(query_count(t, 500, 500, 0, 1e9, 300));
    TRY(memory_exact(t, "after slots were reused"));
    for (percept_slot s = 0; s <= 300; s++)
        if (t->in[s])
            do_remove(t, s);
    TRY(query_count(t, 500, 500, 0, 1e9, 0));
    TRY(put(t, 7, 1, 1, 0, 1));
    TRY(query_count(t, 500, 500, 0, 1e9, 1));
    return inst_close(t);
}

/* Entities at exact Pythagorean offsets around centres on and off cell
 * edges: a query of exactly that radius must report them, and one an ulp
 * short or off must still give a valid answer. */
static int exact_boundary(const pc_plugin *b)
{
    static const double centres[][2] = {{500, 500},   {0, 0},   {64, 64},  {128, 192}, {1000, 1000},
                                        {999.5, 0.5}, {-3, -4}, {1000, 0}, {256, 512}, {1040, -40}};
    for (size_t c = 0; c < sizeof centres / sizeof centres[0]; c++) {
        double cx = centres[c][0], cy = centres[c][1];
        percept_slot next = 0;
        OPEN(t, NULL);
        for (size_t k = 0; k < TRI_COUNT; k++)
            for (int sx = -1; sx <= 1; sx += 2)
                for (int sy = -1; sy <= 1; sy += 2)
                    TRY(put(t, next++, cx + sx * tri[k][0], cy + sy * tri[k][1], 0, 1));
        for (size_t k = 0; k < TRI_COUNT; k++) {
            double r = tri[k][2];
            TRY(query_check(t, cx, cy, 0, r));
            TRY(query_check(t, cx, cy, 0, nextafter(r, 0)));
            TRY(query_check(t, nextafter(cx, INFINITY), nextafter(cy, -INFINITY), 0, r));
            /* And from each entity at that distance, the centre. */
            TRY(put(t, next, cx, cy, 0, 0));
            TRY(query_must_see(t, t->x[k * 4], t->y[k * 4], 0, r, next));
            do_remove(t, next);
        }
        TRY(inst_close(t));
    }
    return 0;
}

/*
 * Queries whose window, computed as x + r or x - r, rounds to just short of
 * an entity the exact test includes: an index that prunes a cell or node by
 * such a window misses it. The entities stand where indexes cut the world
 * (its halves, quarters, and the edges of 64-wide cells).
 */
static int window_rounding(const pc_plugin *b)
{
    static const double lines[] = {500,  -500, 250, -250, 750, -750, 125,  -125,
                                   -936, -488, 536, 984,  -24, 24,   -872, 280};
    enum { LINES = sizeof lines / sizeof lines[0] };
    static const double bounds[4] = {-1000, -1000, 1000, 1000};
    uint64_t rng = 77;
    OPEN(t, bounds);
    for (percept_slot s = 0; s < LINES; s++)
        TRY(put(t, s, lines[s], lines[(s + 5) % LINES], 0, 0));
    /* Company around each, so that a tree splits down to small nodes there. */
    percept_slot next = LINES;
    for (percept_slot s = 0; s < LINES; s++)
        for (int k = 0; k < 40; k++)
            TRY(put(t, next++, t->x[s] + (splitmix_unit(&rng) - 0.5) * 60,
                    t->y[s] + (splitmix_unit(&rng) - 0.5) * 60, 0, 0));
    unsigned made = 0;
    for (percept_slot s = 0; s < LINES; s++) {
        for (int axis = 0; axis < 2; axis++) {
            double p = axis == 0 ? t->x[s] : t->y[s];
            for (int tries = 0; tries < 4000; tries++) {
                double q = p * (splitmix_unit(&rng) * 1.4 - 0.9);
                double r = fabs(p - q); /* the exact test holds */
                if (p > 0 ? q + r >= p : q - r <= p)
                    continue; /* the window reaches p: try another centre */
                TRY(query_must_see(t, axis == 0 ? q : t->x[s], axis == 0 ? t->y[s] : q, 0, r, s));
                made++;
                break;
            }
        }
    }
    CHECK(made >= LINES, "(a fault of the check) only %u rounding cases found", made);
    return inst_close(t);
}

/* Entities beyond the bounds, near and very far, up to the host's limit of
 * 1e15, and queries on their edges from around them. */
static int far_away(const pc_plugin *b)
{
    static const double pos[][2] = {{-10, -10},     {-1e6, 5},  {1e6, 1e6},    {1500, -3},
                                    {-0.5, 1000.5}, {5e5, 5e5}, {1000.5, 500}, {-1e6, -1e6},
                                    {1e15, -1e15},  {-1e15, 3}, {1e12, 1e12},  {-3e14, 7e14}};
    const percept_slot n = sizeof pos / sizeof pos[0];
    uint64_t rng = 0xfa12;
    OPEN(t, NULL);
    for (percept_slot s = 0; s < n; s++)
        TRY(put(t, s, pos[s][0], pos[s][1], 0, s == 8 ? 1e15 : 10));
    TRY(put(t, n, 500, 500, 0, 10));
    for (percept_slot s = 0; s < n; s++) {
        TRY(query_must_see(t, pos[s][0] + 3, pos[s][1] - 4, 0, 5, s));
        TRY(query_check(t, pos[s][0], pos[s][1], 0, 20));
    }
    TRY(all_found(t));
    TRY(query_count(t, 500, 500, 0, 1e300, n + 1));
    TRY(query_count(t, 0, 0, 0, 1e16, n + 1));
    TRY(query_must_see(t, 1e15, 1e15, 0, 2e15, 8));
    /*
     * Beyond each edge by 0.3 to 1000 cells of 64, on the edge of queries
     * scaled by factors with many bits: an index keeping positions as
     * offsets in less precision must widen its filter by their rounding.
     */
    static const double beyond[] = {0.3, 1.7, 10.1, 63.9, 64.1, 200.7, 1000.3};
    percept_slot first = n + 1, s = first;
    for (size_t k = 0; k < sizeof beyond / sizeof beyond[0]; k++) {
        double d = beyond[k] * 64 + splitmix_unit(&rng), along = 1000 * splitmix_unit(&rng);
        TRY(put(t, s++, -d, along, 0, 0));
        TRY(put(t, s++, 1000 + d, along, 0, 0));
        TRY(put(t, s++, along, -d, 0, 0));
        TRY(put(t, s++, along, 1000 + d, 0, 0));
    }
    for (percept_slot k = first; k < s; k++) {
        for (int q = 0; q < 60; q++) {
            const double *p = tri[rnd_below(&rng, TRI_COUNT)];
            double f = 0.01 + 3 * splitmix_unit(&rng), sx = q % 2 ? 1 : -1, sy = q % 4 < 2 ? 1 : -1;
            TRY(query_check(t, t->x[k] + sx * p[0] * f, t->y[k] + sy * p[1] * f, 0, p[2] * f));
        }
    }
    TRY(all_found(t));
    TRY(memory_exact(t, "with entities far away"));
    return inst_close(t);
}

/*
 * Heights: entities at exact distances in three dimensions around centres
 * on and off the edges of 64-wide boxes, a column of entities straight above
 * each other moving up and down, heights up to the host's limit of 1e15. An
 * index of x and y alone passes as a superset; one of z must find each
 * entity across its boxes.
 */
static int heights(const pc_plugin *b)
{
    static const double centres[][3] = {{500, 500, 0},      {0, 0, 64},    {64, 64, -64},
                                        {128, 192, 31.5},   {-3, -4, 1e6}, {256, 512, -0.5},
                                        {1000, 1000, -1000}};
    for (size_t c = 0; c < sizeof centres / sizeof centres[0]; c++) {
        const double *o = centres[c];
        percept_slot next = 0;
        OPEN(t, NULL);
        /* Each offset with every sign, and its axes turned twice. */
        for (size_t k = 0; k < QUAD_COUNT; k++)
            for (int turn = 0; turn < 3; turn++)
                for (int signs = 0; signs < 8; signs++) {
                    double d[3];
                    for (int i = 0; i < 3; i++)
                        d[i] = quad[k][(i + turn) % 3] * (signs >> i & 1 ? -1 : 1);
                    TRY(put(t, next++, o[0] + d[0], o[1] + d[1], o[2] + d[2], 1));
                }
        for (size_t k = 0; k < QUAD_COUNT; k++) {
            double r = quad[k][3];
            TRY(query_check(t, o[0], o[1], o[2], r));
            TRY(query_check(t, o[0], o[1], o[2], nextafter(r, 0)));
            TRY(query_check(t, o[0], o[1], nextafter(o[2], INFINITY), r));
            /* And from each entity at that distance, the centre. */
            TRY(put(t, next, o[0], o[1], o[2], 0));
            for (percept_slot e = (percept_slot)k * 24; e < (percept_slot)k * 24 + 24; e++)
                TRY(query_must_see(t, t->x[e], t->y[e], t->z[e], r, next));
            do_remove(t, next);
        }
        TRY(all_found(t));
        TRY(inst_close(t));
    }

    /* A column 37.5 apart in height, moved up and down, and far heights. */
    static const double far[] = {1e15, -1e15, 1e12, -3e9, 65536.5, -4096};
    uint64_t rng = 0x4e16;
    OPEN(t, NULL);
    for (percept_slot s = 0; s < 41; s++)
        TRY(put(t, s, 100, 100, ((double)s - 20) * 37.5, 0));
    for (percept_slot s = 0; s < 41; s++) {
        TRY(query_must_see(t, 100, 100, t->z[s], 0, s));
        TRY(query_must_see(t, 100, 100, t->z[s] + 37.5, 37.5, s));
        TRY(query_must_see(t, 100, 100, t->z[s] - 37.5, 37.5, s));
    }
    for (int i = 0; i < 400; i++) {
        percept_slot s = (percept_slot)rnd_below(&rng, 41);
        double z = t->z[s] + (splitmix_unit(&rng) - 0.5) * (i % 2 ? 20 : 2000);
        TRY(put(t, s, 100, 100, z, 10));
        TRY(query_must_see(t, 100, 100, z, 0, s));
        TRY(query_check(t, 100 + splitmix_unit(&rng), 100, z + 30 * splitmix_unit(&rng), 40));
    }
    for (percept_slot k = 0; k < sizeof far / sizeof far[0]; k++) {
        percept_slot s = 41 + k;
        TRY(put(t, s, 500, 500, far[k], 10));
        TRY(query_must_see(t, 503, 500, far[k] - 4, 5, s));
        TRY(query_check(t, 500, 500, far[k] / 2, far[k] < 0 ? -far[k] / 2 : far[k] / 2));
    }
    TRY(all_found(t));
    TRY(query_count(t, 0, 0, 0, 1e16, 41 + sizeof far / sizeof far[0]));
    TRY(memory_exact(t, "with entities at many heights"));
    return inst_close(t);
}

/*
 * Thousands of random operations with every query checked; with fail_pct,
 * the host refuses that share of requests and reserve() must cope. One
 * reserve() in twelve is followed by no change, as when another part of the
 * host's call failed: the index must answer as before.
 */
static int random_run(const pc_plugin *b, uint64_t seed, int fail_pct, int ops)
{
    enum { SLOTS = 400 };
    uint64_t rng = seed;
    OPEN(t, NULL);
    t->host.fail_pct = fail_pct;
    t->host.rng = seed ^ 0x5555;
    for (int op = 0; op < ops; op++) {
        percept_slot free_slots[SLOTS + 1], live_slots[SLOTS];
        uint32_t live = 0, nfree = 0;
        for (percept_slot s = 0; s < SLOTS; s++) {
            if (t->in[s])
                live_slots[live++] = s;
            else if (s <= t->slot_count)
                free_slots[nfree++] = s; /* the free slots and one new one, like the host */
        }
        uint64_t k = rnd_below(&rng, 100);
        double x, y, z, r = rnd_below(&rng, 10) == 0 ? 0 : random_radius(&rng, 1000);
        random_position(&rng, 1000, &x, &y, &z);
        percept_slot s;
        int adding = (k < 30 && nfree > 0) || live == 0;
        if (adding) {
            s = free_slots[rnd_below(&rng, nfree)];
        } else {
            s = live_slots[rnd_below(&rng, live)];
            if (k < 85) { /* a step, not a jump */
                x = t->x[s] + (splitmix_unit(&rng) - 0.5) * 40;
                y = t->y[s] + (splitmix_unit(&rng) - 0.5) * 40;
                z = k % 3 == 0 ? t->z[s] : t->z[s] + (splitmix_unit(&rng) - 0.5) * 40;
            }
            if (k >= 80 && k < 85)
                x = t->x[s], y = t->y[s], z = t->z[s]; /* only the range changes */
        }
        if (!adding && k < 45) {
            do_remove(t, s);
        } else {
            uint32_t count = adding && s + 1 > t->slot_count ? s + 1 : t->slot_count;
            int rc = reserve(t, count, s, x, y, z, r);
            TRY(rc == -2);
            CHECK(rc == 0 || fail_pct > 0, "reserve() failed with a working allocator");
            if (rc == 0 && rnd_below(&rng, 12) != 0) {
                TRY(apply(t, s, x, y, z, r));
            } else {
                TRY(memory_exact(t, "after a reserve() that failed or led to no change"));
                if (!adding)
                    TRY(query_must_see(t, t->x[s], t->y[s], t->z[s], 0, s));
            }
        }
        double qx, qy, qz;
        random_position(&rng, 1000, &qx, &qy, &qz);
        TRY(query_check(t, qx, qy, qz, random_radius(&rng, 1000)));
        percept_slot e = live > 0 ? live_slots[rnd_below(&rng, live)] : 0;
        if (t->in[e]) {
            /* At an entity, and at an exact distance from it, in the plane
             * and in space, also scaled by a factor with many bits so that
             * the test lands an ulp or two from the edge. */
            const double *p = tri[rnd_below(&rng, TRI_COUNT)];
            const double *q = quad[rnd_below(&rng, QUAD_COUNT)];
            double f = 0.5 + 50 * splitmix_unit(&rng), ex = t->x[e], ey = t->y[e], ez = t->z[e];
            TRY(query_must_see(t, ex, ey, ez, 0, e));
            TRY(query_check(t, ex + p[0], ey - p[1], ez, p[2]));
            TRY(query_check(t, ex - p[0] * f, ey + p[1] * f, ez, p[2] * f));
            TRY(query_check(t, ex + q[0], ey - q[1], ez + q[2], q[3]));
            TRY(query_check(t, ex - q[0] * f, ey + q[1] * f, ez - q[2] * f, q[3] * f));
        }
        if (op % 500 == 0) {
            TRY(query_count(t, 0, 0, 0, 1e9, t->live));
            TRY(memory_exact(t, "after a run of operations"));
        }
    }
    t->host.fail_pct = 0;
    TRY(all_found(t));
    for (percept_slot s = 0; s < SLOTS; s++)
        if (t->in[s])
            do_remove(t, s);
    TRY(query_count(t, 0, 0, 0, 1e9, 0));
    return inst_close(t);
}

static int randomized(const pc_plugin *b)
{
    TRY(random_run(b, 0x1234, 0, 6000));
    return random_run(b, 0xbeef, 0, 3000);
}

/* A third of the host's requests refused at random. */
static int flaky_alloc(const pc_plugin *b)
{
    return random_run(b, 0xf1a2, 33, 4000);
}

/*
 * While an index grows to thousands (a tree splits nodes, pools grow), each
 * allocation a reserve() asks for fails in turn. After each failure the
 * entity must still be found where it was, the index must answer, and
 * memory_usage() must be exact: nothing the host can observe has changed.
 */
static int reserve_oom(const pc_plugin *b)
{
    enum { BIG = 3000, SPOTS = 4 };
    uint64_t rng = 4242;
    double spot[SPOTS][3];
    uint32_t added = 0;
    OPEN(t, NULL);
    for (int i = 0; i < SPOTS; i++)
        random_position(&rng, 1000, &spot[i][0], &spot[i][1], &spot[i][2]);
    for (int i = 0; i < 3 * BIG; i++) {
        /* Inserts spread out; moves crowd into a few spots, which move on. */
        int adding = added < BIG && (added < 8 || rnd_below(&rng, 3) == 0);
        double x, y, z;
        if (i % 100 == 0) {
            double *c = spot[rnd_below(&rng, SPOTS)];
            random_position(&rng, 1000, &c[0], &c[1], &c[2]);
        }
        if (adding || i % 4 == 0) {
            random_position(&rng, 1000, &x, &y, &z);
        } else {
            const double *c = spot[rnd_below(&rng, SPOTS)];
            x = c[0] + (splitmix_unit(&rng) - 0.5) * 4;
            y = c[1] + (splitmix_unit(&rng) - 0.5) * 4;
            z = c[2] + (splitmix_unit(&rng) - 0.5) * 4;
        }
        percept_slot s = adding ? added : (percept_slot)rnd_below(&rng, added);
        uint32_t count = adding ? s + 1 : t->slot_count;
        for (long granted = 0;; granted++) {
            t->host.fail_after = granted;
            int rc = reserve(t, count, s, x, y, z, 10);
            t->host.fail_after = -1;
            if (rc == 0)
                break;
            TRY(rc == -2);
            CHECK(granted < 64, "reserve() failed with %ld allocations granted", granted);
            TRY(memory_exact(t, "after a reserve() that failed"));
            if (!adding)
                TRY(query_must_see(t, t->x[s], t->y[s], t->z[s], 0, s));
            TRY(query_check(t, x, y, z, 30));
        }
        TRY(apply(t, s, x, y, z, 10));
        added += adding;
        if (i % 500 == 0)
            TRY(memory_exact(t, "after a run of inserts and moves"));
    }
    TRY(query_count(t, 500, 500, 0, 1e9, added));
    TRY(all_found(t));
    TRY(memory_exact(t, "at the end"));
    return inst_close(t);
}

/* In the order they run: the table first, since every other check uses it. */
const pc_check pc_checks[] = {
    {"table", table},
    {"create", create_check},
    {"small_cases", small_cases},
    {"exact_boundary", exact_boundary},
    {"window_rounding", window_rounding},
    {"far_away", far_away},
    {"heights", heights},
    {"randomized", randomized},
    {"reserve_oom", reserve_oom},
    {"flaky_alloc", flaky_alloc},
};

const size_t pc_check_count = sizeof pc_checks / sizeof pc_checks[0];
