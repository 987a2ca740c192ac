/*
 * broken.c - the test plugins, one source built once per variant with
 * -DBROKEN_<VARIANT> (Makefile.am), each as the module of that name. All
 * index by brute force over flat arrays; each variant breaks one thing:
 *
 *   noentry    the entry is exported under another symbol: dlsym must fail
 *   undefsym   it refers to a variable nothing defines: dlopen must fail
 *   badabi     its table claims the next ABI major version
 *   noquery    its mandatory query operation is NULL
 *   wrongname  its table says "somethingelse"
 *   nullops    its entry returns NULL
 *   smallsize  its table claims to be 16 bytes long, too short for the operations
 *   crashy     a sound table whose query traps (SIGILL: a sanitizer would catch a
 *              SIGSEGV itself); with CRASHY_LOOP set it never returns (SIGALRM
 *              blocked), with CRASHY_EXIT it exits with status 0;
 *              CRASHY_ENTRY=trap|loop|print makes the entry trap, never return
 *              or print, CRASHY_ENTRY=hints gives query_hints no ABI defines
 *
 * and four that work, for what the host must do with them:
 *
 *   badparam   takes `level` (1..3); `misreport` blames a parameter index it
 *              was not given, `mute` its parameter without a reason, `whole`
 *              refuses the setup with a reason, `silent` without one, `hungry`
 *              after asking the host for 2 GiB; `crowded = 1` makes reserve()
 *              refuse room for more than one entity
 *   minimal    a table of this ABI that ends at query: the optional
 *              operations and hints it lacks must read as absent
 *   liar       each query also names what it must not: each find twice,
 *              every slot up to two past the highest it was told of, and
 *              UINT32_MAX; the host must drop them (liar.test)
 *
 * and one built for ABI 1.0, whose operations took no height:
 *
 *   abi10      the host must refuse it, naming both versions
 */
#include <percept/backend.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(BROKEN_NOENTRY)
#define NAME "noentry"
#elif defined(BROKEN_UNDEFSYM)
#define NAME "undefsym"
#elif defined(BROKEN_BADABI)
#define NAME "badabi"
#elif defined(BROKEN_NOQUERY)
#define NAME "noquery"
#elif defined(BROKEN_WRONGNAME)
#define NAME "somethingelse"
#elif defined(BROKEN_NULLOPS)
#define NAME "nullops"
#elif defined(BROKEN_SMALLSIZE)
#define NAME "smallsize"
#elif defined(BROKEN_CRASHY)
#define NAME "crashy"
#elif defined(BROKEN_BADPARAM)
#define NAME "badparam"
#elif defined(BROKEN_ABI10)
#define NAME "abi10"
#elif defined(BROKEN_MINIMAL)
#define NAME "minimal"
#elif defined(BROKEN_LIAR)
#define NAME "liar"
#else
#error "define one BROKEN_<VARIANT> (Makefile.am)"
#endif

struct percept_backend {
    const percept_backend_host *host;
    uint32_t capacity;
    uint32_t limit; /* 1 + the highest slot given to reserve() */
    int crowded;
    double *x, *y;
    unsigned char *present;
};

static void set_error(percept_backend_error *error, int index, const char *text)
{
    error->param_index = index;
    snprintf(error->text, sizeof error->text, "%s", text);
}

#if defined(BROKEN_UNDEFSYM)
/* Defined nowhere: the link of a module allows it, the loader does not. */
extern int percept_test_symbol_nothing_defines;
#endif

/* badparam's parameters; the other variants that work take none. */
static int refuse_params(const percept_backend_setup *setup, percept_backend_error *error,
                         int *crowded)
{
#if defined(BROKEN_BADPARAM)
    for (size_t i = 0; i < setup->param_count; i++) {
        const char *key = setup->params[i].key, *value = setup->params[i].value;
        char *end;
        errno = 0;
        long level = strtol(value, &end, 10);
        if (strcmp(key, "misreport") == 0) {
            set_error(error, (int)setup->param_count + 6, "rejected");
        } else if (strcmp(key, "whole") == 0) {
            set_error(error, -1, "these bounds need a larger size");
        } else if (strcmp(key, "silent") == 0) {
            set_error(error, -1, "");
        } else if (strcmp(key, "hungry") == 0) {
            void *block = setup->host->alloc(setup->host->user, NULL, (size_t)1 << 31);
            if (block != NULL) /* a test plugin must not leak either */
                setup->host->alloc(setup->host->user, block, 0);
            set_error(error, -1, "cannot allocate its index");
        } else if (strcmp(key, "mute") == 0) {
            set_error(error, (int)i, "");
        } else if (strcmp(key, "crowded") == 0) {
            *crowded = 1;
            continue;
        } else if (strcmp(key, "level") != 0) {
            set_error(error, (int)i, "unknown key");
        } else if (end == value || *end != '\0' || errno != 0 || level < 1 || level > 3) {
            set_error(error, (int)i, "must be an integer from 1 to 3");
        } else {
            continue;
        }
        return -1;
    }
#elif defined(BROKEN_ABI10) || defined(BROKEN_MINIMAL) || defined(BROKEN_LIAR)
    (void)crowded;
    if (setup->param_count > 0) {
        set_error(error, 0, NAME " takes no parameters");
        return -1;
    }
#else
    (void)setup, (void)error, (void)crowded;
#endif
    return 0;
}

static percept_backend *flat_create(const percept_backend_setup *setup,
                                    percept_backend_error *error)
{
#if defined(BROKEN_UNDEFSYM)
    if (percept_test_symbol_nothing_defines != 0) { /* read, so the reference stays */
        set_error(error, -1, "");
        return NULL;
    }
#endif
    int crowded = 0;
    if (refuse_params(setup, error, &crowded) != 0)
        return NULL;
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (b == NULL) {
        set_error(error, -1, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->host = setup->host;
    b->crowded = crowded;
    return b;
}

static void flat_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->host;
    host->alloc(host->user, b->x, 0);
    host->alloc(host->user, b->y, 0);
    host->alloc(host->user, b->present, 0);
    host->alloc(host->user, b, 0);
}

/* One array grown to `count` elements of `size` bytes, or NULL (the old block stays). */
static void *grow(const percept_backend_host *host, void *old, uint32_t count, size_t size)
{
    return host->alloc(host->user, old, (size_t)count * size);
}

static int flat_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double z, double range)
{
    (void)x, (void)y, (void)z, (void)range;
    if (b->crowded && slot_count > 1)
        return -1;
    uint32_t need = slot_count > slot ? slot_count : slot + 1;
    if (need > b->limit)
        b->limit = need;
    if (need <= b->capacity)
        return 0;
    uint32_t cap = b->capacity ? b->capacity : 16;
    while (cap < need)
        cap *= 2;
    double *xs = grow(b->host, b->x, cap, sizeof *xs);
    if (xs != NULL)
        b->x = xs;
    double *ys = xs ? grow(b->host, b->y, cap, sizeof *ys) : NULL;
    if (ys != NULL)
        b->y = ys;
    unsigned char *present = ys ? grow(b->host, b->present, cap, 1) : NULL;
    if (present == NULL)
        return -1;
    b->present = present;
    memset(b->present + b->capacity, 0, cap - b->capacity);
    b->capacity = cap;
    return 0;
}

static void flat_insert(percept_backend *b, percept_slot slot, double x, double y, double z,
                        double range)
{
    (void)z, (void)range;
    b->x[slot] = x;
    b->y[slot] = y;
    b->present[slot] = 1;
}

static void flat_remove(percept_backend *b, percept_slot slot)
{
    b->present[slot] = 0;
}

#if defined(BROKEN_CRASHY)
/* Never returns, with SIGALRM blocked: only the runner can stop it. */
static void loop_forever(void)
{
    sigset_t alarm_set;
    sigemptyset(&alarm_set);
    sigaddset(&alarm_set, SIGALRM);
    sigprocmask(SIG_BLOCK, &alarm_set, NULL);
    for (volatile int forever = 1; forever;)
        continue;
}
#endif

#if !defined(BROKEN_NOQUERY)
static void flat_query(const percept_backend *b, double x, double y, double z, double r,
                       percept_backend_visit visit, void *ctx)
{
    (void)z; /* the planar test: a superset */
#if defined(BROKEN_CRASHY)
    if (getenv("CRASHY_EXIT") != NULL)
        exit(0);
    if (getenv("CRASHY_LOOP") != NULL)
        loop_forever();
    __builtin_trap();
#endif
#if defined(BROKEN_LIAR)
    const int passes = 2;
#else
    const int passes = 1;
#endif
    for (int pass = 0; pass < passes; pass++)
        for (uint32_t s = 0; s < b->capacity; s++) {
            double dx = b->x[s] - x, dy = b->y[s] - y;
            if (b->present[s] && dx * dx + dy * dy <= r * r)
                visit(ctx, s);
        }
#if defined(BROKEN_LIAR)
    for (uint32_t s = 0; s < b->limit + 2; s++)
        visit(ctx, s);
    visit(ctx, UINT32_MAX);
#endif
}
#endif

#if defined(BROKEN_ABI10)
/* percept_backend_ops as ABI 1.0 defined it, field for field: no heights. */
typedef struct ops_1_0 {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;
    const char *description;
    percept_backend *(*create)(const percept_backend_setup *setup, percept_backend_error *error);
    void (*destroy)(percept_backend *backend);
    int (*reserve)(percept_backend *backend, uint32_t slot_count, percept_slot slot, double x,
                   double y, double range);
    void (*insert)(percept_backend *backend, percept_slot slot, double x, double y, double range);
    void (*update)(percept_backend *backend, percept_slot slot, double x, double y, double range);
    void (*remove)(percept_backend *backend, percept_slot slot);
    void (*query)(const percept_backend *backend, double x, double y, double r,
                  percept_backend_visit visit, void *ctx);
    size_t (*memory_usage)(const percept_backend *backend);
} ops_1_0;

static int reserve_1_0(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                       double y, double range)
{
    return flat_reserve(b, slot_count, slot, x, y, 0, range);
}

static void insert_1_0(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    flat_insert(b, slot, x, y, 0, range);
}

static void query_1_0(const percept_backend *b, double x, double y, double r,
                      percept_backend_visit visit, void *ctx)
{
    flat_query(b, x, y, 0, r, visit, ctx);
}

#define OPS_TYPE ops_1_0
#define RESERVE reserve_1_0
#define INSERT insert_1_0
#define QUERY query_1_0
#else
#if defined(BROKEN_MINIMAL)
/* The mandatory part of percept_backend_ops alone: a read past it is a read
 * past the object, which AddressSanitizer reports in the sanitizer run. */
typedef struct ops_minimal {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;
    const char *description;
    percept_backend *(*create)(const percept_backend_setup *setup, percept_backend_error *error);
    void (*destroy)(percept_backend *backend);
    int (*reserve)(percept_backend *backend, uint32_t slot_count, percept_slot slot, double x,
                   double y, double z, double range);
    void (*insert)(percept_backend *backend, percept_slot slot, double x, double y, double z,
                   double range);
    void (*update)(percept_backend *backend, percept_slot slot, double x, double y, double z,
                   double range);
    void (*remove)(percept_backend *backend, percept_slot slot);
    void (*query)(const percept_backend *backend, double x, double y, double z, double r,
                  percept_backend_visit visit, void *ctx);
} ops_minimal;

_Static_assert(sizeof(ops_minimal) == PERCEPT_BACKEND_OPS_MIN_SIZE,
               "ops_minimal must be the mandatory prefix of percept_backend_ops");
#define OPS_TYPE ops_minimal
#else
#define OPS_TYPE percept_backend_ops
#endif
#define RESERVE flat_reserve
#define INSERT flat_insert
#define QUERY flat_query
#endif

static const OPS_TYPE ops = {
#if defined(BROKEN_ABI10)
    .abi_version = (uint32_t)1 << 16,
#elif defined(BROKEN_BADABI)
    .abi_version = (uint32_t)(PERCEPT_BACKEND_ABI_MAJOR + 1) << 16,
#else
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
#endif
#if defined(BROKEN_SMALLSIZE)
    .struct_size = 16,
#else
    .struct_size = sizeof(OPS_TYPE),
#endif
    .name = NAME,
    .description = "a test backend (tests/plugins/broken.c)",
    .create = flat_create,
    .destroy = flat_destroy,
    .reserve = RESERVE,
    .insert = INSERT,
    .update = INSERT,
    .remove = flat_remove,
#if !defined(BROKEN_NOQUERY)
    .query = QUERY,
#endif
#if defined(BROKEN_LIAR) && defined(PERCEPT_BACKEND_QUERY_LOCAL)
    /* So that the core also takes near observers from its answers. */
    .query_hints = PERCEPT_BACKEND_QUERY_LOCAL,
#endif
};

#if defined(BROKEN_NOENTRY)
#define ENTRY percept_backend_entry_point /* not PERCEPT_BACKEND_ENTRY_SYMBOL */
#else
#define ENTRY percept_backend_entry
#endif

PERCEPT_BACKEND_EXPORT const percept_backend_ops *ENTRY(void);
PERCEPT_BACKEND_EXPORT const percept_backend_ops *ENTRY(void)
{
#if defined(BROKEN_NULLOPS)
    (void)ops;
    return NULL;
#elif defined(BROKEN_CRASHY)
    const char *entry = getenv("CRASHY_ENTRY");
    if (entry != NULL && strcmp(entry, "loop") == 0)
        loop_forever();
    if (entry != NULL && strcmp(entry, "trap") == 0)
        __builtin_trap();
    if (entry != NULL && strcmp(entry, "print") == 0)
        printf("crashy was here\n");
    if (entry != NULL && strcmp(entry, "hints") == 0) {
        static percept_backend_ops hinted;
        hinted = ops;
        hinted.query_hints = 0x6; /* bits the ABI does not define */
        return &hinted;
    }
    return &ops;
#else
    return (const percept_backend_ops *)(const void *)&ops;
#endif
}
