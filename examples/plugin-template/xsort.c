/*
 * xsort.c - a small backend to copy when writing your own: the entities in
 * one array sorted by x. A query finds the start of its x window by binary
 * search and scans to its end; a move shifts the entity to its new place in
 * the order, which is cheap for the short steps games make.
 *
 * It is built outside percept's tree, against the installed
 * <percept/backend.h> only (see Makefile), and loaded by name: the file
 * xsort.so in a config's plugin_dir or in PERCEPT_PLUGIN_PATH.
 */
#include <stdint.h>
#include <string.h>

#include <percept/backend.h>

#define NAME "xsort"

typedef struct entry {
    double x, y;
    percept_slot slot;
} entry;

struct percept_backend {
    const percept_backend_host *host;
    entry *sorted;  /* count entries, ascending x */
    uint32_t *rank; /* [slot]: the slot's index in sorted */
    uint32_t count;
    /* Each array's own capacity: if the second fails to grow, the first
     * keeps its larger block, and memory_usage() must count what is held. */
    uint32_t sorted_cap, rank_cap;
    int exact; /* parameter: filter by true distance, or report the whole strip */
};

/* ------------------------------------------------------------------------ */
/* Creating: every parameter is checked, and a bad one is named              */

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"yes", "on", "true", "1"};
    static const char *const no[] = {"no", "off", "false", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(v, yes[i]) == 0)
            return *out = 1, 0;
        if (strcmp(v, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static percept_backend *xs_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    int exact = 1;

    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        const char *why = NULL;
        if (strcmp(p->key, "exact") != 0)
            why = "unknown parameter (" NAME " takes: exact)";
        else if (parse_bool(p->value, &exact) != 0)
            why = "must be yes or no";
        if (why != NULL) {
            /* The host adds file, line, section and key to this reason. */
            error->param_index = (int)i;
            strncpy(error->text, why, sizeof error->text - 1);
            error->text[sizeof error->text - 1] = '\0';
            return NULL;
        }
    }
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (b == NULL) {
        error->param_index = -1;
        strcpy(error->text, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->host = setup->host; /* the only part of setup that outlives create() */
    b->exact = exact;
    return b;
}

static void xs_destroy(percept_backend *b)
{
    const percept_backend_host *h = b->host;
    h->alloc(h->user, b->sorted, 0);
    h->alloc(h->user, b->rank, 0);
    h->alloc(h->user, b, 0);
}

/* ------------------------------------------------------------------------ */
/* Changing: reserve() is the only step that may fail                        */

/*
 * Every present entity has a distinct slot below slot_count, so arrays of
 * slot_count elements hold everything the next insert or update needs.
 */
static int xs_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                      double y, double z, double range)
{
    (void)slot, (void)x, (void)y, (void)z, (void)range;
    if (slot_count <= b->sorted_cap && slot_count <= b->rank_cap)
        return 0;
    uint32_t cap = b->sorted_cap ? b->sorted_cap : 64;
    while (cap < slot_count)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    if (b->sorted_cap < cap) {
        entry *sorted = b->host->alloc(b->host->user, b->sorted, (size_t)cap * sizeof *sorted);
        if (sorted == NULL)
            return -1;
        b->sorted = sorted;
        b->sorted_cap = cap;
    }
    if (b->rank_cap < cap) {
        uint32_t *rank = b->host->alloc(b->host->user, b->rank, (size_t)cap * sizeof *rank);
        if (rank == NULL)
            return -1; /* sorted stays grown, and counted; the next reserve grows rank */
        b->rank = rank;
        b->rank_cap = cap;
    }
    return 0;
}

static void swap(percept_backend *b, uint32_t i, uint32_t j)
{
    entry t = b->sorted[i];
    b->sorted[i] = b->sorted[j];
    b->sorted[j] = t;
    b->rank[b->sorted[i].slot] = i;
    b->rank[b->sorted[j].slot] = j;
}

/* Moves the entry at i to its place in the x order: a few swaps for a short step. */
static void resort(percept_backend *b, uint32_t i)
{
    while (i > 0 && b->sorted[i - 1].x > b->sorted[i].x) {
        swap(b, i - 1, i);
        i--;
    }
    while (i + 1 < b->count && b->sorted[i + 1].x < b->sorted[i].x) {
        swap(b, i, i + 1);
        i++;
    }
}

static void xs_insert(percept_backend *b, percept_slot slot, double x, double y, double z,
                      double range)
{
    (void)z;     /* an index of the plane: a superset in three dimensions (backend.h) */
    (void)range; /* a backend may use the range (towers do); this one has no need */
    uint32_t i = b->count++;
    b->sorted[i] = (entry){x, y, slot};
    b->rank[slot] = i;
    resort(b, i);
}

static void xs_update(percept_backend *b, percept_slot slot, double x, double y, double z,
                      double range)
{
    (void)z, (void)range;
    uint32_t i = b->rank[slot];
    b->sorted[i].x = x;
    b->sorted[i].y = y;
    resort(b, i);
}

/* Called without reserve(): shifting down needs no memory. */
static void xs_remove(percept_backend *b, percept_slot slot)
{
    uint32_t i = b->rank[slot];
    b->count--;
    memmove(&b->sorted[i], &b->sorted[i + 1], (size_t)(b->count - i) * sizeof *b->sorted);
    for (; i < b->count; i++)
        b->rank[b->sorted[i].slot] = i;
}

/* ------------------------------------------------------------------------ */
/* Querying: never allocates, never misses                                   */

/*
 * The window is found with the host's own arithmetic: an entry is too far
 * left when (x - e.x)^2 > r^2, computed exactly as the host computes the
 * relation. Testing e.x < x - r instead would round differently and could
 * drop an entity standing exactly on the boundary.
 */
static void xs_query(const percept_backend *b, double x, double y, double z, double r,
                     percept_backend_visit visit, void *ctx)
{
    (void)z;
    double r2 = r * r;
    uint32_t lo = 0, hi = b->count;

    while (lo < hi) { /* the first entry that is not too far to the left */
        uint32_t mid = lo + (hi - lo) / 2;
        double dx = x - b->sorted[mid].x;
        if (dx > 0 && dx * dx > r2)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t i = lo; i < b->count; i++) {
        const entry *e = &b->sorted[i];
        double dx = e->x - x, dy = e->y - y;
        if (dx > 0 && dx * dx > r2)
            break; /* past the right end of the window */
        /* Inexact mode reports the square around the point: a superset, which the host filters. */
        if (b->exact ? dx * dx + dy * dy <= r2 : dy * dy <= r2)
            visit(ctx, e->slot);
    }
}

static size_t xs_memory_usage(const percept_backend *b)
{
    /* Exactly what is held: percept's test_memory compares it byte for byte. */
    return sizeof *b + (size_t)b->sorted_cap * sizeof *b->sorted +
           (size_t)b->rank_cap * sizeof *b->rank;
}

/* ------------------------------------------------------------------------ */

static const percept_backend_ops xsort_ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = NAME, /* must equal the file name without .so */
    .description = "entities sorted by x; a query scans its x window",
    .create = xs_create,
    .destroy = xs_destroy,
    .reserve = xs_reserve,
    .insert = xs_insert,
    .update = xs_update,
    .remove = xs_remove,
    .query = xs_query,
    .memory_usage = xs_memory_usage,
};

/* The one exported symbol. */
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &xsort_ops;
}
