/*
 * plugin_check.c - the conformance checks of a backend plugin (see
 * plugin_check.h), run on one plugin at a time. Each check builds its own
 * instances over a host allocator that counts every block, poisons new and
 * freed memory, and fails on request, and keeps a model of what the index
 * holds to compare every query with.
 */
#include "plugin_check.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_file.h"
#include "splitmix.h"

#define MAX_SLOTS 4096 /* the highest slot any check uses, plus one */

typedef pc_plugin backend;

const pc_plugin *pc_current;
const char *pc_current_check;

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */

int pc_plugin_locate(pc_plugin *p, const char *path)
{
    memset(p, 0, sizeof *p);
    size_t n = strlen(path);
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    size_t len = strlen(base);
    if (n >= sizeof p->path || len <= 3 || strcmp(base + len - 3, ".so") != 0 ||
        len - 3 >= sizeof p->name) {
        snprintf(p->load_error, sizeof p->load_error,
                 "not a plugin file name (NAME.so, the name under %zu characters)", sizeof p->name);
        return -1;
    }
    memcpy(p->path, path, n + 1);
    memcpy(p->name, base, len - 3);
    p->name[len - 3] = '\0';
    return 0;
}

int pc_plugin_load(pc_plugin *p, const char *path)
{
    if (pc_plugin_locate(p, path) != 0)
        return -1;
    /* dlopen() searches the library path for a name without a slash. */
    char where[sizeof p->path + 2];
    snprintf(where, sizeof where, "%s%s", strchr(path, '/') ? "" : "./", path);
    /* Opened as the library opens it: a file built for another processor
     * or cut short, or one dlopen() refuses, gets the words
     * percept_world_open() would give it. */
    p->handle = plugin_file_open(where, p->load_error, sizeof p->load_error);
    if (p->handle == NULL)
        return -1;
    dlerror();
    void *sym = dlsym(p->handle, PERCEPT_BACKEND_ENTRY_SYMBOL);
    if (sym == NULL) {
        const char *e = dlerror();
        snprintf(p->load_error, sizeof p->load_error, "dlsym: %s",
                 e != NULL ? e : "the entry symbol is NULL");
        return -1;
    }
    percept_backend_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object to function pointer, as POSIX allows */
    p->ops = entry();
    if (p->ops == NULL) {
        snprintf(p->load_error, sizeof p->load_error, "the entry returned no ops table");
        return -1;
    }
    return 0;
}

void pc_plugin_unload(pc_plugin *p)
{
    if (p->handle != NULL)
        dlclose(p->handle);
    p->handle = NULL;
    p->ops = NULL;
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */

static void report_to_stderr(const char *line)
{
    fputs(line, stderr);
}

static void (*reporter)(const char *line) = report_to_stderr;

void pc_set_reporter(void (*report)(const char *line))
{
    reporter = report != NULL ? report : report_to_stderr;
}

/* Reports one failure, naming the backend and the check. Each message says
 * what was asked and what came back, so the user needs no line of ours. */
static void report(const char *fmt, ...)
{
    char msg[1024], out[1400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(out, sizeof out, "backend '%s' fails %s: %s\n",
             pc_current != NULL ? pc_current->name : "?",
             pc_current_check != NULL ? pc_current_check : "?", msg);
    reporter(out);
}

/* In a check: report and give up on this plugin. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            report(__VA_ARGS__);                                                                   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* Propagate the failure of a helper that already reported it. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((expr) != 0)                                                                           \
            return -1;                                                                             \
    } while (0)

/* ------------------------------------------------------------------------ */
/* A host allocator that counts, poisons, and fails on request               */

/* Every block starts with its size, so that growth can be filled with
 * garbage, and a mark, so that a pointer the host never gave (a block the
 * plugin took from malloc, say) is reported instead of crashing the C
 * library's free(). */
#define BLOCK_MARK 0x70657263u /* "perc" */
typedef union block_header {
    max_align_t align;
    struct {
        size_t size;
        uint32_t mark;
    } h;
} block_header;

typedef struct counting_host {
    percept_backend_host host;
    size_t calls;      /* every call, frees included */
    long live;         /* blocks held */
    long fail_after;   /* < 0: never fail; else this many more requests succeed */
    int fail_pct;      /* also fail this share of requests (0..100), pseudo-randomly */
    uint64_t fail_rng; /* state for fail_pct */
    size_t failures;   /* requests refused */
    size_t foreign;    /* frees or resizes of pointers the host never gave */
    size_t live_bytes; /* the sizes of the blocks held, as last requested */
    size_t grows;      /* requests for a new block or a larger one, granted or not */
} counting_host;

static void *counting_alloc(void *user, void *ptr, size_t size)
{
    counting_host *h = user;
    block_header *old = ptr != NULL ? (block_header *)ptr - 1 : NULL;

    h->calls++;
    if (old != NULL && old->h.mark != BLOCK_MARK) {
        h->foreign++;
        return NULL; /* untouched: not ours to free or to grow */
    }
    if (size == 0) {
        if (old != NULL) {
            h->live_bytes -= old->h.size;
            memset(old, 0x5a, sizeof *old + old->h.size); /* a use after free reads garbage */
            free(old);
            h->live--;
        }
        return NULL;
    }
    if (old == NULL || size > old->h.size)
        h->grows++;
    if (h->fail_after == 0 ||
        (h->fail_pct > 0 && (int)(splitmix_next(&h->fail_rng) % 100) < h->fail_pct)) {
        h->failures++;
        return NULL;
    }
    if (h->fail_after > 0)
        h->fail_after--;
    if (size > SIZE_MAX - sizeof *old)
        return NULL;
    size_t old_size = old != NULL ? old->h.size : 0;
    block_header *p = realloc(old, sizeof *p + size);
    if (p == NULL)
        return NULL;
    if (old == NULL)
        h->live++;
    if (size > old_size) /* new memory is never zero by luck */
        memset((char *)(p + 1) + old_size, 0xa5, size - old_size);
    h->live_bytes = h->live_bytes - old_size + size;
    p->h.size = size;
    p->h.mark = BLOCK_MARK;
    return p + 1;
}

static void host_init(counting_host *h)
{
    memset(h, 0, sizeof *h);
    h->host.alloc = counting_alloc;
    h->host.user = h;
    h->fail_after = -1;
    h->fail_rng = 12345;
}

/* ------------------------------------------------------------------------ */
/* An instance and the test's own model of what it holds                     */

typedef struct inst {
    const backend *b;
    counting_host host;
    percept_backend *be;
    double min_x, min_y, max_x, max_y;
    uint32_t slot_count; /* 1 + the highest slot used, as the host would say */
    double x[MAX_SLOTS], y[MAX_SLOTS], range[MAX_SLOTS];
    unsigned char in[MAX_SLOTS]; /* 1: the slot is in the index */
    uint32_t hits[MAX_SLOTS];    /* the last query's visits per slot */
    size_t stray_visits;         /* visits of slots >= MAX_SLOTS */
    percept_slot stray_slot;
} inst;

/* Visits of one query; repeats are allowed by the contract and counted. */
static void visit(void *ctx, percept_slot slot)
{
    inst *t = ctx;
    if (slot < MAX_SLOTS) {
        t->hits[slot]++;
    } else {
        t->stray_visits++;
        t->stray_slot = slot;
    }
}

static inst *inst_new(const backend *b)
{
    inst *t = calloc(1, sizeof *t);
    if (t == NULL) {
        fputs("out of memory for a check's instance\n", stderr);
        exit(2);
    }
    t->b = b;
    host_init(&t->host);
    return t;
}

/* create() with these bounds and parameters; fills *err. Returns the instance or NULL. */
static percept_backend *create_with(inst *t, double min_x, double min_y, double max_x, double max_y,
                                    const percept_backend_param *params, size_t param_count,
                                    percept_backend_error *err)
{
    percept_backend_setup setup;

    memset(&setup, 0, sizeof setup);
    setup.host = &t->host.host;
    setup.min_x = min_x, setup.min_y = min_y, setup.max_x = max_x, setup.max_y = max_y;
    setup.params = params;
    setup.param_count = param_count;
    memset(err, 0, sizeof *err);
    err->param_index = 12345; /* create() must set it on failure */
    t->min_x = min_x, t->min_y = min_y, t->max_x = max_x, t->max_y = max_y;
    t->be = t->b->ops->create(&setup, err);
    return t->be;
}

/* create()'s reason, or what to say when it gave none. */
static const char *reason_of(const percept_backend_error *err)
{
    if (memchr(err->text, '\0', sizeof err->text) == NULL)
        return "(its reason is not a terminated string)";
    return err->text[0] != '\0' ? err->text : "(no reason given)";
}

/* An instance with no parameters over the given bounds; fails the backend if refused. */
static int open_bounds(inst *t, double min_x, double min_y, double max_x, double max_y)
{
    percept_backend_error err;
    create_with(t, min_x, min_y, max_x, max_y, NULL, 0, &err);
    CHECK(t->be != NULL,
          "create() with no parameters and bounds %.17g %.17g %.17g %.17g failed: %s", min_x, min_y,
          max_x, max_y, reason_of(&err));
    return 0;
}

static int open_default(inst *t)
{
    return open_bounds(t, 0, 0, 1000, 1000);
}

/* destroy(), then every block the backend took must have been given back. */
static int inst_close(inst *t)
{
    if (t->be != NULL)
        t->b->ops->destroy(t->be);
    t->be = NULL;
    CHECK(t->host.live == 0, "destroy() left %ld block(s) of the host allocator unfreed",
          t->host.live);
    CHECK(t->host.foreign == 0,
          "%zu free(s) or resize(s) through host->alloc of blocks it never gave (allocated "
          "with malloc?)",
          t->host.foreign);
    free(t);
    return 0;
}

static int reserve(inst *t, uint32_t slot_count, percept_slot slot, double x, double y, double r)
{
    return t->b->ops->reserve(t->be, slot_count, slot, x, y, r);
}

/*
 * insert() and update() after a reserve() that succeeded: they must not ask
 * the host for memory (they may give some back), or a change could fail
 * half-made, or make the host's count of growth wrong.
 */
static int apply(inst *t, int updating, percept_slot slot, double x, double y, double r)
{
    const char *op = updating ? "update" : "insert";
    size_t grows = t->host.grows;
    (updating ? t->b->ops->update : t->b->ops->insert)(t->be, slot, x, y, r);
    CHECK(
        t->host.grows == grows,
        "%s(slot %u, %.17g, %.17g, %.17g) asked host->alloc for memory %zu time(s): reserve() must "
        "prepare all an %s needs",
        op, (unsigned)slot, x, y, r, t->host.grows - grows, op);
    return 0;
}

static int apply_insert(inst *t, percept_slot slot, double x, double y, double r)
{
    return apply(t, 0, slot, x, y, r);
}

static int apply_update(inst *t, percept_slot slot, double x, double y, double r)
{
    return apply(t, 1, slot, x, y, r);
}

static int do_insert(inst *t, percept_slot slot, double x, double y, double r)
{
    CHECK(slot < MAX_SLOTS && !t->in[slot], "test bug: slot %u", (unsigned)slot);
    uint32_t count = slot + 1 > t->slot_count ? slot + 1 : t->slot_count;
    int rc = reserve(t, count, slot, x, y, r);
    CHECK(rc == 0, "reserve(%u, slot %u, %.17g, %.17g, %.17g) returned %d with a working allocator",
          (unsigned)count, (unsigned)slot, x, y, r, rc);
    t->slot_count = count;
    TRY(apply_insert(t, slot, x, y, r));
    t->in[slot] = 1;
    t->x[slot] = x, t->y[slot] = y, t->range[slot] = r;
    return 0;
}

static int do_update(inst *t, percept_slot slot, double x, double y, double r)
{
    CHECK(t->in[slot], "test bug: slot %u", (unsigned)slot);
    int rc = reserve(t, t->slot_count, slot, x, y, r);
    CHECK(rc == 0, "reserve(%u, slot %u, %.17g, %.17g, %.17g) for an update returned %d",
          (unsigned)t->slot_count, (unsigned)slot, x, y, r, rc);
    TRY(apply_update(t, slot, x, y, r));
    t->x[slot] = x, t->y[slot] = y, t->range[slot] = r;
    return 0;
}

static void do_remove(inst *t, percept_slot slot)
{
    t->b->ops->remove(t->be, slot);
    t->in[slot] = 0;
}

/* The plugin's memory_usage(), or NULL when it has none. */
static size_t (*memory_usage_of(const backend *b))(const percept_backend *)
{
    if (b->ops->struct_size <
        offsetof(percept_backend_ops, memory_usage) + sizeof b->ops->memory_usage)
        return NULL;
    return b->ops->memory_usage;
}

/* memory_usage(), where the plugin has it, must be what it holds from the host. */
static int memory_exact(inst *t, const char *when)
{
    size_t (*usage)(const percept_backend *) = memory_usage_of(t->b);
    CHECK(usage != NULL || !t->b->memory_required,
          "has no memory_usage(), which this run requires of it");
    if (usage == NULL)
        return 0;
    size_t reported = usage(t->be);
    CHECK(reported == t->host.live_bytes,
          "memory_usage() reports %zu bytes %s, but the instance holds %zu from host->alloc "
          "(keep one capacity per array, changed only when that array grew; and take every "
          "block from host->alloc, none from malloc())",
          reported, when, t->host.live_bytes);
    return 0;
}

/* The relation's own test: dx*dx + dy*dy <= r*r. */
static int within(double x1, double y1, double x2, double y2, double r)
{
    double dx = x2 - x1, dy = y2 - y1;
    return dx * dx + dy * dy <= r * r;
}

/*
 * For a slot a query missed: when it lies on the range's boundary to within
 * a rounding or two, the usual cause, said after the message.
 */
static const char *boundary_hint(double x, double y, double r, double sx, double sy)
{
    double dx = sx - x, dy = sy - y, d2 = dx * dx + dy * dy, r2 = r * r;
    if (!(fabs(d2 - r2) <= 1e-12 * r2))
        return "";
    return ": it lies on the boundary, where rounding decides. Test dx*dx + dy*dy <= r*r in "
           "IEEE double, as the host does, built with -ffp-contract=off (a fused multiply-add "
           "rounds once less) and never -ffast-math; a window cut at x - r or x + r needs a "
           "margin for its own rounding";
}

/*
 * Runs query(x, y, r) and checks the contract: every slot in the index
 * within r visited, nothing visited that is not in the index, and no call of
 * the host allocator. The visits stay in t->hits.
 */
static int query_check(inst *t, double x, double y, double r)
{
    memset(t->hits, 0, sizeof t->hits);
    t->stray_visits = 0;
    size_t calls = t->host.calls;
    t->b->ops->query(t->be, x, y, r, visit, t);
    CHECK(t->host.calls == calls,
          "query(%.17g, %.17g, %.17g) called the host allocator %zu time(s)", x, y, r,
          t->host.calls - calls);
    CHECK(t->stray_visits == 0,
          "query(%.17g, %.17g, %.17g) visited slot %u, which was never inserted", x, y, r,
          (unsigned)t->stray_slot);
    for (uint32_t s = 0; s < MAX_SLOTS; s++) {
        if (t->in[s]) {
            CHECK(t->hits[s] > 0 || !within(x, y, t->x[s], t->y[s], r),
                  "query(%.17g, %.17g, %.17g) missed slot %u at (%.17g, %.17g), within the "
                  "distance%s",
                  x, y, r, (unsigned)s, t->x[s], t->y[s], boundary_hint(x, y, r, t->x[s], t->y[s]));
        } else {
            CHECK(t->hits[s] == 0,
                  "query(%.17g, %.17g, %.17g) visited slot %u, which is not in the index (%s)", x,
                  y, r, (unsigned)s, s < t->slot_count ? "removed" : "never inserted");
        }
    }
    return 0;
}

/* A query that must visit `slot`: checked, and that slot's visit required. */
static int query_must_see(inst *t, double x, double y, double r, percept_slot slot)
{
    TRY(query_check(t, x, y, r));
    CHECK(t->hits[slot] > 0, "query(%.17g, %.17g, %.17g) did not visit slot %u at (%.17g, %.17g)",
          x, y, r, (unsigned)slot, t->x[slot], t->y[slot]);
    return 0;
}

/* A query after which the number of distinct slots visited must be `n`. */
static int query_count(inst *t, double x, double y, double r, unsigned n)
{
    unsigned seen = 0;
    TRY(query_check(t, x, y, r));
    for (uint32_t s = 0; s < MAX_SLOTS; s++)
        seen += t->hits[s] > 0;
    CHECK(seen == n, "query(%.17g, %.17g, %.17g) visited %u distinct slots, expected %u", x, y, r,
          seen, n);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The checks                                                                */

/* The ops table is well-formed and names the file it came from. */
static int table(const backend *b)
{
    const percept_backend_ops *o = b->ops;
    CHECK(o != NULL, "cannot be loaded: %s", b->load_error);
    CHECK(o->abi_version >> 16 == PERCEPT_BACKEND_ABI_MAJOR,
          "abi_version %u.%u has another major version than this percept's %u: set abi_version = "
          "PERCEPT_BACKEND_ABI_VERSION and rebuild against this percept's <percept/backend.h>",
          (unsigned)(o->abi_version >> 16), (unsigned)(o->abi_version & 0xffff),
          (unsigned)PERCEPT_BACKEND_ABI_MAJOR);
    CHECK(o->struct_size >= PERCEPT_BACKEND_OPS_MIN_SIZE,
          "struct_size is %u bytes, too small for the mandatory operations (%zu bytes): set "
          "struct_size = sizeof(percept_backend_ops)",
          (unsigned)o->struct_size, (size_t)PERCEPT_BACKEND_OPS_MIN_SIZE);
    CHECK(o->name != NULL, "name is NULL: set it to \"%s\", the file's name", b->name);
    /* percept finds backend NAME as NAME.so and checks the two agree. */
    CHECK(strcmp(o->name, b->name) == 0,
          "name '%s' is not the file's name '%s': percept loads backend NAME from NAME.so, so "
          "set name to \"%s\" or call the file %s.so",
          o->name, b->name, b->name, o->name);
    const char *missing = !o->create    ? "create"
                          : !o->destroy ? "destroy"
                          : !o->reserve ? "reserve"
                          : !o->insert  ? "insert"
                          : !o->update  ? "update"
                          : !o->remove  ? "remove"
                          : !o->query   ? "query"
                                        : NULL;
    CHECK(missing == NULL, "a mandatory operation is NULL: %s", missing);
    /* A hint bit this percept does not define is a mistake (a stray value,
     * a flag of another table), unless the plugin is of a later minor
     * version, which may define more than this checker knows. */
    const uint32_t known_hints = PERCEPT_BACKEND_QUERY_LOCAL;
    if (o->struct_size >= offsetof(percept_backend_ops, query_hints) + sizeof o->query_hints &&
        (o->abi_version & 0xffff) <= PERCEPT_BACKEND_ABI_MINOR)
        CHECK((o->query_hints & ~known_hints) == 0,
              "query_hints 0x%x sets bits that backend ABI %u.%u does not define (0x%x): set "
              "only PERCEPT_BACKEND_QUERY_* bits",
              (unsigned)o->query_hints, (unsigned)PERCEPT_BACKEND_ABI_MAJOR,
              (unsigned)PERCEPT_BACKEND_ABI_MINOR, (unsigned)(o->query_hints & ~known_hints));
    /* Here, not only in the checks that measure memory, so that a run of
     * any checks with "table" first tells a plugin without it. */
    CHECK(memory_usage_of(b) != NULL || !b->memory_required,
          "has no memory_usage(), which this run requires of it");
    return 0;
}
/* No parameters: every backend has defaults, for any sensible bounds. */
static int create_defaults(const backend *b)
{
    static const double bounds[][4] = {
        {0, 0, 1000, 1000}, {0, 0, 1024, 1024}, {-1000, -600, -500, 400}, {0.5, 0.25, 10.5, 1.75},
        {0, 0, 0, 0},       {-5, 7, -5, 7},     {0, 0, 100000, 10},
    };
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        const double *w = bounds[i];
        inst *t = inst_new(b);
        TRY(open_bounds(t, w[0], w[1], w[2], w[3]));
        /* Corners, the centre and a point outside, all found again. */
        TRY(do_insert(t, 0, w[0], w[1], 0));
        TRY(do_insert(t, 1, w[2], w[3], 1));
        TRY(do_insert(t, 2, (w[0] + w[2]) / 2, (w[1] + w[3]) / 2, 2));
        TRY(do_insert(t, 3, w[2] + 50, w[1] - 50, 3));
        for (percept_slot s = 0; s < 4; s++)
            TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
        TRY(query_count(t, w[0], w[1], 1e9, 4));
        if (b->ops->struct_size >=
                offsetof(percept_backend_ops, memory_usage) + sizeof b->ops->memory_usage &&
            b->ops->memory_usage != NULL) {
            size_t calls = t->host.calls;
            (void)b->ops->memory_usage(t->be);
            CHECK(t->host.calls == calls, "memory_usage() called the host allocator");
        }
        TRY(memory_exact(t, "after four inserts"));
        TRY(inst_close(t));
    }
    return 0;
}

/* Huge bounds: created and correct, or refused cleanly (a grid may find them too large). */
static int create_huge_bounds(const backend *b)
{
    percept_backend_error err;
    inst *t = inst_new(b);
    if (create_with(t, -1e6, -1e6, 1e6, 1e6, NULL, 0, &err) == NULL) {
        CHECK(err.text[0] != '\0', "create() with huge bounds failed without a reason");
        CHECK(err.param_index == -1,
              "create() with huge bounds and no parameters failed with param_index %d",
              err.param_index);
        return inst_close(t);
    }
    TRY(do_insert(t, 0, -1e6, -1e6, 5));
    TRY(do_insert(t, 1, 1e6, 1e6, 5));
    TRY(do_insert(t, 2, 3, 4, 5));
    TRY(query_must_see(t, -1e6 + 3, -1e6 + 4, 5, 0));
    TRY(query_must_see(t, 1e6, 1e6, 0, 1));
    TRY(query_count(t, 0, 0, 5, 1));
    TRY(query_count(t, 0, 0, 3e6, 3));
    return inst_close(t);
}

/* An unknown key is refused, blaming parameter 0 with a reason, leaking nothing. */
static int create_unknown_key(const backend *b)
{
    static const percept_backend_param one[] = {{"no_such_key", "1", 3}};
    static const percept_backend_param two[] = {{"no_such_key", "1", 3}, {"another", "x", 4}};
    static const percept_backend_param empty_value[] = {{"no_such_key", "", 3}};
    const percept_backend_param *sets[] = {one, two, empty_value};
    const size_t counts[] = {1, 2, 1};

    for (size_t i = 0; i < 3; i++) {
        percept_backend_error err;
        inst *t = inst_new(b);
        percept_backend *be = create_with(t, 0, 0, 1000, 1000, sets[i], counts[i], &err);
        CHECK(be == NULL, "create() accepted the unknown key 'no_such_key'");
        CHECK(err.param_index == 0, "create() set param_index %d for an unknown key at index 0",
              err.param_index);
        CHECK(err.text[0] != '\0' && memchr(err.text, '\0', sizeof err.text) != NULL,
              "create() gave no reason for refusing an unknown key");
        /* The wording docs/plugins.md asks for, as every shipped backend and the template say. */
        CHECK(strstr(err.text, "unknown parameter") != NULL,
              "create() refused an unknown key with '%s', which does not say 'unknown parameter' "
              "(the words the host's messages and every backend use for it: docs/plugins.md)",
              err.text);
        TRY(inst_close(t));
    }
    return 0;
}

/*
 * The size parameters of the shipped backends at their limits: each bad
 * value is refused, blaming it with a reason that names the key and the
 * limit; the smallest size taken works. hashgrid numbers cells up to
 * +-2^60, so a cell_size below 0.001 would clamp coordinates the core
 * accepts (+-1e15) into shared cells. grid and tower refuse a size whose
 * cells would outnumber 2^24 (every tiny size, over bounds with an area)
 * and, over bounds of no area, where any size makes one cell, a subnormal
 * size whose inverse is not finite.
 */
typedef struct size_case {
    const char *backend, *key, *value;
    double bounds[4];
    const char *says[2]; /* what the refusal must say; NULL: the value is taken */
} size_case;

#define AT_LEAST_DBL_MIN "at least 2.2250738585072014e-308" /* DBL_MIN, read back exactly */
static const size_case size_cases[] = {
    {"hashgrid", "cell_size", "1e-300", {0, 0, 1000, 1000}, {"cell_size", "at least 0.001"}},
    {"hashgrid", "cell_size", "0.0009", {0, 0, 1000, 1000}, {"cell_size", "at least 0.001"}},
    {"hashgrid", "cell_size", "0", {0, 0, 1000, 1000}, {"cell_size", "at least 0.001"}},
    {"hashgrid", "cell_size", "-5", {0, 0, 1000, 1000}, {"cell_size", "at least 0.001"}},
    {"hashgrid", "cell_size", "abc", {0, 0, 1000, 1000}, {"plain decimal", "at least 0.001"}},
    {"hashgrid", "cell_size", "1.5e15", {0, 0, 1000, 1000}, {"at most 1e15", NULL}},
    {"hashgrid", "cell_size", "1e15", {0, 0, 1000, 1000}, {NULL, NULL}},
    {"grid", "cell_size", "1e400", {0, 0, 1000, 1000}, {"plain decimal", "greater than 0"}},
    {"grid", "cell_size", "1e16", {0, 0, 1000, 1000}, {"at most 1e15", NULL}},
    {"tower", "tower_size", "inf", {0, 0, 1000, 1000}, {"plain decimal", "at most 1e15"}},
    {"tower", "tower_size", "2e15", {0, 0, 1000, 1000}, {"at most 1e15", NULL}},
    {"hashgrid", "cell_size", "0.001", {0, 0, 1000, 1000}, {NULL, NULL}},
    {"grid", "cell_size", "1e-310", {0, 0, 0, 0}, {"cell_size", AT_LEAST_DBL_MIN}},
    {"grid", "cell_size", "1e-300", {0, 0, 1000, 1000}, {"cell_size", "16777216"}},
    {"grid", "cell_size", "0", {0, 0, 1000, 1000}, {"greater than 0", NULL}},
    {"grid", "cell_size", "1e-300", {0, 0, 0, 0}, {NULL, NULL}},
    {"tower", "tower_size", "1e-310", {5, 5, 5, 5}, {"tower_size", AT_LEAST_DBL_MIN}},
    {"tower", "tower_size", "1e-300", {0, 0, 1000, 1000}, {"tower_size", "16777216"}},
    {"tower", "tower_size", "1e-300", {5, 5, 5, 5}, {NULL, NULL}},
};

static int size_limits(const backend *b)
{
    int cases = 0;
    for (size_t i = 0; i < sizeof size_cases / sizeof size_cases[0]; i++) {
        const size_case *c = &size_cases[i];
        if (strcmp(c->backend, b->name) != 0)
            continue;
        cases++;
        const percept_backend_param param[] = {{c->key, c->value, 7}};
        const double *w = c->bounds;
        percept_backend_error err;
        inst *t = inst_new(b);
        create_with(t, w[0], w[1], w[2], w[3], param, 1, &err);
        if (c->says[0] != NULL) {
            CHECK(t->be == NULL, "create() took %s = %s", c->key, c->value);
            CHECK(err.param_index == 0, "create() refused %s = %s with param_index %d, not 0",
                  c->key, c->value, err.param_index);
            for (int k = 0; k < 2; k++)
                CHECK(c->says[k] == NULL || strstr(err.text, c->says[k]) != NULL,
                      "create() refused %s = %s with '%s', which does not say '%s'", c->key,
                      c->value, reason_of(&err), c->says[k]);
            TRY(inst_close(t));
            continue;
        }
        CHECK(t->be != NULL, "create() refused %s = %s: %s", c->key, c->value, reason_of(&err));
        /* Found at the limits of the core's coordinates, and apart a cell's width. */
        static const double pos[][2] = {{1e15, 1e15},   {-1e15, -1e15}, {1e15, -1e15},
                                        {0.0005, 0},    {0.0015, 0},    {-0.0005, 0.0025},
                                        {1e15, 999e12}, {3, 4}};
        const size_t n = sizeof pos / sizeof pos[0];
        for (percept_slot s = 0; s < n; s++)
            TRY(do_insert(t, s, pos[s][0], pos[s][1], 1));
        for (percept_slot s = 0; s < n; s++) {
            TRY(query_must_see(t, pos[s][0], pos[s][1], 0, s));
            TRY(query_check(t, pos[s][0], pos[s][1], 0.002));
        }
        TRY(query_check(t, 0, 0, 1e9));
        TRY(query_count(t, 0, 0, 3e15, (unsigned)n));
        TRY(memory_exact(t, "with the smallest size"));
        TRY(inst_close(t));
    }
    /* Another plugin's size parameter, if it has one, is not known here:
     * say so rather than pass a check that tested nothing. */
    return cases > 0 ? 0 : PC_NOT_APPLICABLE;
}

/* An empty index visits nothing, however wide the query; also once emptied again. */
static int empty_query(const backend *b)
{
    static const double q[][3] = {{0, 0, 0},       {500, 500, 100}, {500, 500, 1e9},
                                  {-1e6, 1e6, 10}, {1000, 1000, 0}, {-3, 2000, 5000}};
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        TRY(query_count(t, q[i][0], q[i][1], q[i][2], 0));
    for (percept_slot s = 0; s < 20; s++)
        TRY(do_insert(t, s, 50.0 * s, 1000 - 50.0 * s, 10));
    for (percept_slot s = 0; s < 20; s++)
        do_remove(t, (s * 7) % 20);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        TRY(query_count(t, q[i][0], q[i][1], q[i][2], 0));
    return inst_close(t);
}

/* One entity: found at its point, near it, and after it moves or changes range. */
static int one_entity(const backend *b)
{
    inst *t = inst_new(b);
    TRY(open_default(t));
    TRY(do_insert(t, 0, 100, 100, 10));
    TRY(query_must_see(t, 100, 100, 0, 0));
    TRY(query_must_see(t, 110, 100, 10, 0));
    TRY(query_must_see(t, 100, 90, 10, 0));
    TRY(query_must_see(t, 1000, 1000, 1e9, 0));
    TRY(query_count(t, 100, 100, 5, 1));
    TRY(do_update(t, 0, 900, 50, 10));
    TRY(query_must_see(t, 900, 50, 0, 0));
    TRY(query_must_see(t, 906, 58, 10, 0));
    TRY(query_check(t, 100, 100, 5));   /* the old place: only a superset if reported */
    TRY(do_update(t, 0, 900, 50, 400)); /* a range change alone */
    TRY(query_must_see(t, 900, 50, 0, 0));
    TRY(do_update(t, 0, 900, 50, 0));
    TRY(query_must_see(t, 905, 50, 5, 0));
    do_remove(t, 0);
    TRY(query_count(t, 900, 50, 1e9, 0));
    return inst_close(t);
}

/* Entities on the very same point are all reported, at r 0 and from a distance. */
static int coincident(const backend *b)
{
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (percept_slot s = 0; s < 40; s++)
        TRY(do_insert(t, s, 250.5, 250.5, s % 3 == 0 ? 0 : 20));
    TRY(query_count(t, 250.5, 250.5, 0, 40));
    TRY(query_count(t, 250.5, 250.5, 1, 40));
    TRY(query_count(t, 253.5, 254.5, 5, 40));
    TRY(query_count(t, 250.5 + 64, 250.5, 64, 40));
    /* Half move away onto another shared point. */
    for (percept_slot s = 0; s < 40; s += 2)
        TRY(do_update(t, s, 0, 0, 5));
    TRY(query_must_see(t, 0, 0, 0, 0));
    for (percept_slot s = 0; s < 40; s++)
        TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
    return inst_close(t);
}

/*
 * Entities at exact Pythagorean offsets (3-4-5, 5-12-13, 8-15-17 and along
 * the axes, scaled to land on cell edges of common sizes) around centres on
 * and off such edges: a query of exactly that radius must report them.
 */
static const double tri[][3] = {{3, 4, 5},     {5, 12, 13},    {8, 15, 17},    {0, 7, 7},
                                {7, 0, 7},     {48, 64, 80},   {36, 48, 60},   {64, 0, 64},
                                {0, 128, 128}, {96, 128, 160}, {120, 160, 200}};
static const double centres[][2] = {{500, 500},   {0, 0},   {64, 64},  {128, 192}, {1000, 1000},
                                    {999.5, 0.5}, {-3, -4}, {1000, 0}, {256, 512}, {1040, -40}};
#define TRI_COUNT (sizeof tri / sizeof tri[0])
#define CENTRE_COUNT (sizeof centres / sizeof centres[0])

/* Inserts the 4 sign variants of every triangle around (cx, cy), in order, from slot *next. */
static int insert_ring(inst *t, double cx, double cy, percept_slot *next)
{
    for (size_t k = 0; k < TRI_COUNT; k++)
        for (int sx = -1; sx <= 1; sx += 2)
            for (int sy = -1; sy <= 1; sy += 2)
                TRY(do_insert(t, (*next)++, cx + sx * tri[k][0], cy + sy * tri[k][1], 1));
    return 0;
}

static int exact_boundary(const backend *b)
{
    for (size_t c = 0; c < CENTRE_COUNT; c++) {
        double cx = centres[c][0], cy = centres[c][1];
        percept_slot next = 0;
        inst *t = inst_new(b);
        TRY(open_default(t));
        TRY(insert_ring(t, cx, cy, &next));
        for (size_t k = 0; k < TRI_COUNT; k++) {
            double r = tri[k][2];
            TRY(query_check(t, cx, cy, r));
            /* and the other way round: from each entity at that distance, the centre */
            percept_slot s = (percept_slot)(k * 4);
            TRY(do_insert(t, next, cx, cy, 0));
            TRY(query_must_see(t, t->x[s], t->y[s], r, next));
            do_remove(t, next);
        }
        TRY(inst_close(t));
    }
    return 0;
}

/*
 * Just outside: one ulp less radius, or one ulp further away. Nothing is
 * required, but the answer must still be a valid one: no stray slot, no
 * allocation, and one ulp more radius still finds everything on the edge.
 */
static int just_outside(const backend *b)
{
    for (size_t c = 0; c < CENTRE_COUNT; c++) {
        double cx = centres[c][0], cy = centres[c][1];
        percept_slot next = 0;
        inst *t = inst_new(b);
        TRY(open_default(t));
        TRY(insert_ring(t, cx, cy, &next));
        for (size_t k = 0; k < TRI_COUNT; k++) {
            double r = tri[k][2];
            TRY(query_check(t, cx, cy, nextafter(r, 0)));
            TRY(query_check(t, cx, cy, nextafter(r, INFINITY)));
            TRY(query_check(t, nextafter(cx, INFINITY), nextafter(cy, -INFINITY), r));
        }
        TRY(inst_close(t));
    }
    return 0;
}

/*
 * Queries whose window, computed as x + r (or x - r, y + r, y - r), rounds
 * to just short of an entity that the exact test includes: an index that
 * prunes a cell, node or list by such a window misses it. The entities
 * stand where indexes cut the world (bounds -1000 to 1000): at its centre's
 * halves, quarters and eighths, and on the lines of 64-wide cells from its
 * corner (the shipped grids' default), where a tree's or grid's edge lies
 * exactly on the point. Each query comes from the side toward the origin,
 * from a centre with finer bits than the distance, so that p - q rounds;
 * the search for a distance whose window falls short is deterministic.
 */
static int window_rounding(const backend *b)
{
    static const double lines[] = {500,  -500, 250, -250, 750, -750, 125,  -125,
                                   -936, -488, 536, 984,  -24, 24,   -872, 280};
    enum { LINES = sizeof lines / sizeof lines[0] };
    inst *t = inst_new(b);
    TRY(open_bounds(t, -1000, -1000, 1000, 1000));
    uint64_t rng = 77;
    for (percept_slot s = 0; s < LINES; s++)
        TRY(do_insert(t, s, lines[s], lines[(s + 5) % LINES], 0));
    /* Company around each, so that a tree splits down to small nodes there. */
    percept_slot next = LINES;
    for (percept_slot s = 0; s < LINES; s++)
        for (int k = 0; k < 40; k++)
            TRY(do_insert(t, next++, t->x[s] + (splitmix_unit(&rng) - 0.5) * 60,
                          t->y[s] + (splitmix_unit(&rng) - 0.5) * 60, 0));
    unsigned made = 0;
    for (percept_slot s = 0; s < LINES; s++) {
        for (int axis = 0; axis < 2; axis++) {
            double p = axis == 0 ? t->x[s] : t->y[s];
            for (int tries = 0; tries < 4000; tries++) {
                double q = p * (splitmix_unit(&rng) * 1.4 - 0.9); /* between p and -0.9 p */
                double r = fabs(p - q); /* the exact test: (p - q)^2 <= r^2 holds */
                if (p > 0 ? q + r >= p : q - r <= p)
                    continue; /* the window reaches p: try another centre */
                double qx = axis == 0 ? q : t->x[s], qy = axis == 0 ? t->y[s] : q;
                TRY(query_must_see(t, qx, qy, r, s));
                made++;
                break;
            }
        }
    }
    /* The search finds such a centre for nearly every point and axis. */
    CHECK(made >= LINES, "test bug: %u rounding cases found for %u points and axes, fewer than %u",
          made, 2 * LINES, (unsigned)LINES);
    return inst_close(t);
}

/* Entities beyond the bounds, near and very far, negative and positive. */
static int outside_bounds(const backend *b)
{
    static const double pos[][2] = {{-10, -10},     {-1e6, 5},  {1e6, 1e6},    {1500, -3},
                                    {-0.5, 1000.5}, {5e5, 5e5}, {1000.5, 500}, {-1e6, -1e6},
                                    {2000, 2000},   {500, -1e6}};
    const size_t n = sizeof pos / sizeof pos[0];
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (percept_slot s = 0; s < n; s++)
        TRY(do_insert(t, s, pos[s][0], pos[s][1], 10));
    TRY(do_insert(t, (percept_slot)n, 500, 500, 10)); /* one inside */
    for (percept_slot s = 0; s < n; s++) {
        TRY(query_must_see(t, pos[s][0], pos[s][1], 0, s));
        TRY(query_must_see(t, pos[s][0] + 3, pos[s][1] - 4, 5, s));
        TRY(query_check(t, pos[s][0], pos[s][1], 20));
    }
    TRY(query_count(t, 500, 500, 3e6, (unsigned)n + 1));
    TRY(query_count(t, -1e6, 1e6, 1e9, (unsigned)n + 1));
    TRY(query_must_see(t, -1e6 + 1, 1e6, 2e6, 1)); /* from far outside onto far outside */
    TRY(query_must_see(t, 1e6, -1e6, 2e6, 9));
    /* Moving between far places and back inside. */
    for (percept_slot s = 0; s < n; s++)
        TRY(do_update(t, s, pos[(s + 3) % n][0], pos[(s + 3) % n][1], 10));
    for (percept_slot s = 0; s < n; s++)
        TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
    for (percept_slot s = 0; s < n; s++)
        TRY(do_update(t, s, 100.0 * s, 50, 10));
    for (percept_slot s = 0; s < n; s++)
        TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
    TRY(query_check(t, -1e6, 5, 100));
    return inst_close(t);
}

/* Radius 0: the entity standing exactly at the point must be reported. */
static int zero_range(const backend *b)
{
    static const double pos[][2] = {{10, 10}, {10, 10.5}, {700, 300}, {0, 0},         {1000, 1000},
                                    {64, 64}, {-64, 128}, {1e6, 0},   {333.25, 0.125}};
    const size_t n = sizeof pos / sizeof pos[0];
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (percept_slot s = 0; s < n; s++)
        TRY(do_insert(t, s, pos[s][0], pos[s][1], 0));
    for (percept_slot s = 0; s < n; s++)
        TRY(query_must_see(t, pos[s][0], pos[s][1], 0, s));
    TRY(query_check(t, 10, 10.25, 0));
    return inst_close(t);
}

/* Radius 1e9: everything, from anywhere. */
static int huge_range(const backend *b)
{
    uint64_t rng = 77;
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (percept_slot s = 0; s < 300; s++) {
        double x = (double)(splitmix_next(&rng) % 4000) - 1500,
               y = (double)(splitmix_next(&rng) % 4000) - 1500;
        if (s % 25 == 0)
            x *= 500; /* some far away */
        TRY(do_insert(t, s, x, y, (double)(s % 7) * 10));
    }
    TRY(query_count(t, 500, 500, 1e9, 300));
    TRY(query_count(t, -1e5, 3e5, 1e9, 300));
    TRY(query_count(t, 0, 0, 1e8, 300));
    return inst_close(t);
}

/*
 * Extreme but valid values: positions at the host's limit (1e15, far
 * outside the bounds) and between, and radii up to 1e300, which the
 * checks ask with though the host never does.
 */
static int extreme_values(const backend *b)
{
    inst *t = inst_new(b);
    TRY(open_default(t));
    TRY(do_insert(t, 0, 1e15, -1e15, 1e15));
    TRY(do_insert(t, 1, 500, 500, 0));
    TRY(do_insert(t, 2, -1e15, 3, 1));
    TRY(do_insert(t, 3, 1e12, 1e12, 1));
    TRY(do_insert(t, 4, -3e14, 7e14, 0));
    TRY(query_count(t, 500, 500, 1e300, 5));
    TRY(query_count(t, 0, 0, 1e150, 5));
    TRY(query_count(t, 0, 0, 1e16, 5));
    TRY(query_must_see(t, 1e15, -1e15, 0, 0));
    TRY(query_must_see(t, -1e15, 3, 0, 2));
    TRY(query_must_see(t, -1e15 + 0.5, 3, 1, 2));
    TRY(query_must_see(t, 1e12, 1e12, 0, 3));
    TRY(query_must_see(t, -3e14, 7e14, 0, 4));
    TRY(query_must_see(t, 1e15, 1e15, 2e15, 0));
    TRY(do_update(t, 0, -1e15, 3, 1e15));
    TRY(query_must_see(t, -1e15, 3, 0, 0));
    TRY(query_must_see(t, -1e15, 3, 0, 2));
    TRY(do_update(t, 3, 1e15, 1e15, 1));
    TRY(query_must_see(t, 1e15, 1e15, 0, 3));
    TRY(query_check(t, 1e12, 1e12, 1));
    return inst_close(t);
}

/* A removed slot is never reported; a slot inserted again is found at its new place. */
static int slot_reuse(const backend *b)
{
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (percept_slot s = 0; s < 10; s++)
        TRY(do_insert(t, s, 100.0 * s + 5, 100.0 * s + 5, 10));
    do_remove(t, 3);
    do_remove(t, 7);
    TRY(query_count(t, 500, 500, 1e9, 8));
    TRY(query_check(t, 305, 305, 0));
    TRY(query_check(t, 705, 705, 50));
    TRY(do_insert(t, 3, 900, 100, 20));
    TRY(query_must_see(t, 900, 100, 0, 3));
    TRY(query_check(t, 305, 305, 10));  /* the old place: a stale entry would be a superset */
    TRY(do_insert(t, 10, 305, 305, 0)); /* a new slot where the old one stood */
    TRY(query_must_see(t, 305, 305, 0, 10));
    TRY(query_count(t, 500, 500, 1e9, 10));
    for (percept_slot s = 0; s <= 10; s++)
        if (t->in[s])
            do_remove(t, s);
    TRY(query_count(t, 500, 500, 1e9, 0));
    TRY(do_insert(t, 7, 1, 1, 1));
    TRY(query_count(t, 500, 500, 1e9, 1));
    TRY(query_must_see(t, 1, 1, 0, 7));
    return inst_close(t);
}

/* ------------------------------------------------------------------------ */
/* Randomized: thousands of operations, every query checked                  */

#define RANDOM_SLOTS 400

static uint64_t rnd_below(uint64_t *rng, uint64_t n)
{
    return splitmix_next(rng) % n;
}

/*
 * A position in or out of the bounds [0, w]: mostly uniform over twice the
 * world around it, sometimes whole or half numbers (shared edges), sometimes
 * far away.
 */
static void random_position(uint64_t *rng, double w, double *x, double *y)
{
    uint64_t k = rnd_below(rng, 100);
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

/* A query radius 0 .. 5 * w / 16, sometimes a whole number, sometimes 0. */
static double random_radius(uint64_t *rng, double w)
{
    uint64_t k = rnd_below(rng, 100);
    if (k < 5)
        return 0;
    if (k < 40)
        return (double)rnd_below(rng, (uint64_t)(5 * w / 16) + 1);
    return splitmix_unit(rng) * 5 * w / 16;
}

/*
 * One reserve() in twelve that succeeded is followed by no insert or
 * update, as when another part of the host's call failed: the index must
 * answer as before, and the next operation is whatever comes.
 */
static int abandoned(uint64_t *rng)
{
    return rnd_below(rng, 12) == 0;
}

/* fail_pct > 0: the host refuses that share of requests, and reserve() must cope. */
static int randomized_run(const backend *b, uint64_t seed, int fail_pct, int ops)
{
    static const double w = 1000;
    uint64_t rng = seed;
    percept_slot free_slots[RANDOM_SLOTS], live_slots[RANDOM_SLOTS];
    inst *t = inst_new(b);
    TRY(open_default(t));
    t->host.fail_pct = fail_pct;
    t->host.fail_rng = seed ^ 0x5555;

    for (int op = 0; op < ops; op++) {
        uint32_t live = 0, nfree = 0;
        for (percept_slot s = 0; s < RANDOM_SLOTS; s++) {
            if (t->in[s])
                live_slots[live++] = s;
            else if (s <= t->slot_count)
                free_slots[nfree++] = s; /* the free slots and one new one, like the host */
        }
        uint64_t k = rnd_below(&rng, 100);
        double x, y;
        double r = rnd_below(&rng, 10) == 0 ? 0 : random_radius(&rng, w);
        random_position(&rng, w, &x, &y);

        if ((k < 30 && live < RANDOM_SLOTS) || live == 0) {
            percept_slot s = free_slots[rnd_below(&rng, nfree)];
            uint32_t count = s + 1 > t->slot_count ? s + 1 : t->slot_count;
            int rc = reserve(t, count, s, x, y, r);
            CHECK(rc == 0 || rc == -1, "reserve() returned %d", rc);
            CHECK(rc == 0 || fail_pct > 0, "reserve() failed with a working allocator");
            if (rc == 0 && abandoned(&rng)) {
                TRY(memory_exact(t, "after a reserve() for an insert was abandoned"));
            } else if (rc == 0) {
                t->slot_count = count;
                TRY(apply_insert(t, s, x, y, r));
                t->in[s] = 1;
                t->x[s] = x, t->y[s] = y, t->range[s] = r;
            } else {
                TRY(memory_exact(t, "after a reserve() for an insert failed"));
            }
        } else {
            percept_slot s = live_slots[rnd_below(&rng, live)];
            if (k < 45) {
                do_remove(t, s);
            } else {
                if (k < 85) { /* a step, not a jump */
                    x = t->x[s] + (splitmix_unit(&rng) - 0.5) * 40;
                    y = t->y[s] + (splitmix_unit(&rng) - 0.5) * 40;
                }
                if (k >= 80 && k < 85)
                    x = t->x[s], y = t->y[s]; /* only the range changes */
                int rc = reserve(t, t->slot_count, s, x, y, r);
                CHECK(rc == 0 || rc == -1, "reserve() returned %d", rc);
                CHECK(rc == 0 || fail_pct > 0, "reserve() failed with a working allocator");
                if (rc == 0 && abandoned(&rng)) {
                    TRY(memory_exact(t, "after a reserve() for an update was abandoned"));
                    TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
                } else if (rc == 0) {
                    TRY(apply_update(t, s, x, y, r));
                    t->x[s] = x, t->y[s] = y, t->range[s] = r;
                } else {
                    TRY(memory_exact(t, "after a reserve() for an update failed"));
                    TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
                }
            }
        }

        /* Queries: anywhere; exactly at an entity; at an exact distance from one. */
        double qx, qy;
        random_position(&rng, w, &qx, &qy);
        TRY(query_check(t, qx, qy, random_radius(&rng, w)));
        live = 0;
        for (percept_slot s = 0; s < RANDOM_SLOTS; s++)
            if (t->in[s])
                live_slots[live++] = s;
        if (live > 0) {
            percept_slot s = live_slots[rnd_below(&rng, live)];
            const double *p = tri[rnd_below(&rng, TRI_COUNT)];
            TRY(query_check(t, t->x[s], t->y[s], 0));
            TRY(query_check(t, t->x[s] + p[0], t->y[s] - p[1], p[2]));
            /*
             * The same triangle scaled by a factor with many bits: the double
             * test lands within an ulp or two of the boundary, on either
             * side, where an index computing in less precision misses.
             */
            double f = 0.5 + 50 * splitmix_unit(&rng);
            TRY(query_check(t, t->x[s] - p[0] * f, t->y[s] + p[1] * f, p[2] * f));
        }
        if (op % 500 == 0) {
            TRY(query_count(t, 0, 0, 1e9, live));
            TRY(memory_exact(t, "after a run of operations"));
        }
    }
    t->host.fail_pct = 0;
    for (percept_slot s = 0; s < RANDOM_SLOTS; s++)
        if (t->in[s])
            do_remove(t, s);
    TRY(query_count(t, 0, 0, 1e9, 0));
    return inst_close(t);
}

static int randomized(const backend *b)
{
    TRY(randomized_run(b, 0x1234, 0, 6000));
    TRY(randomized_run(b, 0xbeef, 0, 3000));
    return 0;
}

/*
 * Entities beyond the bounds, each exactly on the edge of queries from
 * around it. An index keeping positions as offsets in less precision (the
 * shipped grids keep float offsets from their cell's corner) must widen
 * its filter by their rounding, which grows with the offset: an entity far
 * beyond an edge cell's corner has the largest. Those too far for any
 * margin must still be found (the grids report them unfiltered). The
 * triangles are scaled by factors with many bits, so that the exact test
 * lands within an ulp or two of the boundary, on either side.
 */
static int far_offsets(const backend *b)
{
    /* Beyond the edge, in default cells (64 units): near, within 64 cells, beyond. */
    static const double beyond[] = {0.3, 1.7, 10.1, 63.9, 64.1, 200.7, 1000.3};
    enum { BEYOND = sizeof beyond / sizeof beyond[0] };
    uint64_t rng = 0xfa12;
    inst *t = inst_new(b);
    TRY(open_default(t));
    percept_slot n = 0;
    for (int k = 0; k < BEYOND; k++) {
        double d = beyond[k] * 64 + splitmix_unit(&rng);
        double along = 1000 * splitmix_unit(&rng);
        TRY(do_insert(t, n++, -d, along, 0));
        TRY(do_insert(t, n++, 1000 + d, along, 0));
        TRY(do_insert(t, n++, along, -d, 0));
        TRY(do_insert(t, n++, along, 1000 + d, 0));
        TRY(do_insert(t, n++, -d, -d, 0));
        TRY(do_insert(t, n++, 1000 + d, 1000 + d, 0));
    }
    for (percept_slot s = 0; s < n; s++) {
        for (int q = 0; q < 60; q++) {
            const double *p = tri[rnd_below(&rng, TRI_COUNT)];
            double f = 0.01 + 3 * splitmix_unit(&rng);
            double sx = q % 2 ? 1 : -1, sy = q % 4 < 2 ? 1 : -1;
            TRY(query_check(t, t->x[s] + sx * p[0] * f, t->y[s] + sy * p[1] * f, p[2] * f));
        }
        TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
    }
    return inst_close(t);
}

/*
 * A crowd of 4,095 entities a unit apart (a 63 x 65 lattice, a third of them
 * nudged off it), where a query's square holds thousands: indexes that cut a
 * long walk into pieces (crosslist walks a window in segments between
 * sampled nodes, and keeps a bounded number of them) must not lose the
 * pieces' ends, nor what lies past the last piece they kept.
 */
static int crowded_windows(const backend *b)
{
    uint64_t rng = 0xc0ffee;
    inst *t = inst_new(b);
    TRY(open_default(t));
    percept_slot s = 0;
    for (int i = 0; i < 63; i++)
        for (int j = 0; j < 65; j++, s++) {
            double dx = s % 3 == 0 ? splitmix_unit(&rng) - 0.5 : 0;
            TRY(do_insert(t, s, 200 + i + dx, 300 + j, 2));
        }
    static const double radii[] = {0, 1, 2.5, 7, 16, 31, 40, 100};
    for (int round = 0; round < 2; round++) {
        for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++)
            for (int q = 0; q < 12; q++) {
                percept_slot at = (percept_slot)rnd_below(&rng, s);
                TRY(query_must_see(t, t->x[at], t->y[at], radii[k], at));
                TRY(query_check(t, 200 + 63 * splitmix_unit(&rng), 300 + 65 * splitmix_unit(&rng),
                                radii[k]));
            }
        /* The whole crowd, from its middle and from a corner. */
        TRY(query_count(t, 231, 332, 50, s));
        TRY(query_count(t, 200, 300, 63 * 1.5, s));
        /* Reorder the lists: every other column steps half a unit across its neighbours. */
        for (percept_slot m = 0; m < s; m += 2)
            TRY(do_update(t, m, t->x[m] + 0.5, t->y[m] - 0.5, 2));
    }
    return inst_close(t);
}

/* ------------------------------------------------------------------------ */
/* A failing host allocator                                                  */

/* create() when the allocator fails at its k-th request: NULL with -1, or fine; no leak. */
static int create_oom(const backend *b)
{
    int succeeded = 0;
    for (long k = 0; k < 64 && !succeeded; k++) {
        percept_backend_error err;
        inst *t = inst_new(b);
        t->host.fail_after = k;
        if (create_with(t, 0, 0, 1000, 1000, NULL, 0, &err) == NULL) {
            CHECK(err.param_index == -1,
                  "create() out of memory (request %ld refused) set param_index %d, not -1", k,
                  err.param_index);
            CHECK(t->host.live == 0, "create() out of memory leaked %ld block(s)", t->host.live);
        } else {
            succeeded = 1;
            t->host.fail_after = -1;
            TRY(do_insert(t, 0, 1, 2, 3));
            TRY(query_must_see(t, 1, 2, 0, 0));
        }
        TRY(inst_close(t));
    }
    CHECK(succeeded, "create() never succeeded with 64 allocations allowed");
    return 0;
}

/*
 * With every request refused, reserve() returns -1 (or 0 when it needed
 * nothing, and then the change must work), and the index keeps answering
 * correctly; once the allocator works again, so does everything else.
 */
static int reserve_oom(const backend *b)
{
    uint64_t rng = 99;
    inst *t = inst_new(b);
    TRY(open_default(t));
    for (percept_slot s = 0; s < 50; s++) {
        double x, y;
        random_position(&rng, 1000, &x, &y);
        TRY(do_insert(t, s, x, y, 10));
    }
    t->host.fail_after = 0;
    for (int i = 0; i < 400; i++) {
        double x, y;
        random_position(&rng, 1000, &x, &y);
        if (i % 2 == 0 && t->slot_count < MAX_SLOTS) {
            /* a new slot, sometimes far beyond the current count */
            percept_slot s = i % 20 == 0 && t->slot_count + 300 < MAX_SLOTS ? t->slot_count + 300
                                                                            : t->slot_count;
            int rc = reserve(t, s + 1, s, x, y, 10);
            CHECK(rc == 0 || rc == -1, "reserve() returned %d", rc);
            if (rc == 0) {
                t->slot_count = s + 1;
                TRY(apply_insert(t, s, x, y, 10));
                t->in[s] = 1, t->x[s] = x, t->y[s] = y, t->range[s] = 10;
            }
        } else {
            percept_slot s;
            do
                s = (percept_slot)rnd_below(&rng, t->slot_count);
            while (!t->in[s]);
            double r = i % 3 == 0 ? 1e6 : 10;
            int rc = reserve(t, t->slot_count, s, x, y, r);
            CHECK(rc == 0 || rc == -1, "reserve() returned %d", rc);
            if (rc == 0) {
                TRY(apply_update(t, s, x, y, r));
                t->x[s] = x, t->y[s] = y, t->range[s] = r;
            }
        }
        double qx, qy;
        random_position(&rng, 1000, &qx, &qy);
        TRY(query_check(t, qx, qy, random_radius(&rng, 1000)));
    }
    unsigned live = 0;
    for (percept_slot s = 0; s < MAX_SLOTS; s++)
        live += t->in[s];
    TRY(query_count(t, 0, 0, 1e9, live));
    for (percept_slot s = 0; s < MAX_SLOTS; s++)
        if (t->in[s])
            TRY(query_must_see(t, t->x[s], t->y[s], 0, s));

    /* The allocator works again. */
    t->host.fail_after = -1;
    for (int i = 0; i < 200 && t->slot_count < MAX_SLOTS; i++) {
        double x, y;
        random_position(&rng, 1000, &x, &y);
        TRY(do_insert(t, t->slot_count, x, y, 20));
    }
    live = 0;
    for (percept_slot s = 0; s < MAX_SLOTS; s++)
        live += t->in[s];
    TRY(query_count(t, 500, 500, 1e9, live));
    for (percept_slot s = 0; s < MAX_SLOTS; s++)
        if (t->in[s])
            TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
    return inst_close(t);
}

/*
 * The same while an index grows to thousands, where a tree splits its nodes
 * and pools grow: before each insert and update is made, every allocation
 * its reserve() asks for fails in turn (the first, then the second once the
 * first is granted, and so on). After each failure the entity must still be
 * found where it was, the index must answer, and memory_usage() must be
 * exact. A reserve() that takes an entity out of the index before it knows
 * it can put it back loses it here, and one that rolls back a capacity that
 * did grow misreports its memory.
 */
static int big_index_reserve_oom(const backend *b)
{
    enum { BIG = 3000, SPOTS = 4 };
    uint64_t rng = 4242;
    inst *t = inst_new(b);
    TRY(open_default(t));
    double spot[SPOTS][2];
    for (int i = 0; i < SPOTS; i++)
        random_position(&rng, 1000, &spot[i][0], &spot[i][1]);
    size_t failed = 0;
    uint32_t added = 0;
    for (int i = 0; i < 3 * BIG; i++) {
        /* Inserts spread out, and between them moves crowding into a few
         * spots, so that growth comes in both. */
        int adding = added < BIG && (added < 8 || rnd_below(&rng, 3) == 0);
        double x, y;
        if (i % 100 == 0) { /* a crowd moves on: a tree keeps splitting new nodes */
            double *c = spot[rnd_below(&rng, SPOTS)];
            random_position(&rng, 1000, &c[0], &c[1]);
        }
        if (adding || i % 4 == 0) {
            random_position(&rng, 1000, &x, &y);
        } else {
            const double *c = spot[rnd_below(&rng, SPOTS)];
            x = c[0] + (splitmix_unit(&rng) - 0.5) * 4;
            y = c[1] + (splitmix_unit(&rng) - 0.5) * 4;
        }
        percept_slot s = adding ? (percept_slot)added : (percept_slot)rnd_below(&rng, added);
        uint32_t count = adding ? s + 1 : t->slot_count;
        int rc;
        for (long granted = 0;; granted++) {
            t->host.fail_after = granted;
            rc = reserve(t, count, s, x, y, 10);
            t->host.fail_after = -1;
            CHECK(rc == 0 || rc == -1, "reserve() returned %d", rc);
            if (rc == 0)
                break;
            CHECK(granted < 64, "reserve() failed with %ld allocations granted", granted);
            failed++;
            TRY(memory_exact(t, "after a reserve() that failed"));
            if (!adding)
                TRY(query_must_see(t, t->x[s], t->y[s], 0, s));
            TRY(query_check(t, x, y, 30)); /* around where it was to go */
        }
        if (adding) {
            t->slot_count = count;
            TRY(apply_insert(t, s, x, y, 10));
            t->in[s] = 1;
            added++;
        } else {
            TRY(apply_update(t, s, x, y, 10));
        }
        t->x[s] = x, t->y[s] = y, t->range[s] = 10;
        if (i % 500 == 0)
            TRY(memory_exact(t, "after a run of inserts and moves"));
    }
    CHECK(added > BIG / 2, "test bug: only %u inserts", added);
    TRY(query_count(t, 500, 500, 1e9, added));
    for (percept_slot k = 0; k < added; k++)
        TRY(query_must_see(t, t->x[k], t->y[k], 0, k));
    TRY(memory_exact(t, "at the end"));
    return inst_close(t);
}

/* A third of the requests refused at random, through thousands of operations. */
static int flaky_alloc(const backend *b)
{
    return randomized_run(b, 0xf1a2, 33, 4000);
}
/* The harness itself: a block the host allocator never gave is counted as
 * foreign and left alone, whether freed or resized through host->alloc (a
 * plugin mixing malloc with the host). Not a plugin's test: no backend. */
int pc_check_host_allocator(void)
{
    /* A block of the plugin's own, with room for a header of zeros before
     * the pointer it would pass: no mark. */
    block_header *own = calloc(2, sizeof *own);
    if (own == NULL)
        return -1;
    counting_host h;
    host_init(&h);
    void *foreign = own + 1;
    int ok = counting_alloc(&h, foreign, 0) == NULL && counting_alloc(&h, foreign, 32) == NULL &&
             h.foreign == 2;
    void *mine = counting_alloc(&h, NULL, 24);
    ok = ok && mine != NULL && counting_alloc(&h, mine, 0) == NULL && h.foreign == 2 && h.live == 0;
    free(own); /* still the plugin's, untouched by the host */
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------------------ */

/* In the order they run: the table first, since every other check uses it. */
const pc_check pc_checks[] = {
    {"table", table},
    {"create_defaults", create_defaults},
    {"create_huge_bounds", create_huge_bounds},
    {"create_unknown_key", create_unknown_key},
    {"size_limits", size_limits},
    {"empty_query", empty_query},
    {"one_entity", one_entity},
    {"coincident", coincident},
    {"exact_boundary", exact_boundary},
    {"just_outside", just_outside},
    {"window_rounding", window_rounding},
    {"outside_bounds", outside_bounds},
    {"far_offsets", far_offsets},
    {"zero_range", zero_range},
    {"huge_range", huge_range},
    {"extreme_values", extreme_values},
    {"slot_reuse", slot_reuse},
    {"randomized", randomized},
    {"crowded_windows", crowded_windows},
    {"create_oom", create_oom},
    {"reserve_oom", reserve_oom},
    {"big_index_reserve_oom", big_index_reserve_oom},
    {"flaky_alloc", flaky_alloc},
};

const size_t pc_check_count = sizeof pc_checks / sizeof pc_checks[0];
