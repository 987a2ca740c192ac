/*
 * crosslist.c - the "crosslist" backend (cross-linked lists, sweep and
 * prune): every entity sits on an X-sorted and a Y-sorted list; a query
 * walks the axis window [q-r, q+r] of whichever axis holds fewer entities
 * and filters by exact planar distance.
 *
 * Each sorted list is the bottom level of a skip list. A slot's height
 * (1..MAX_LEVEL, P(h > k) = 4^-k) is drawn once, from a seeded generator,
 * when its slot number is first reserved; its upper-level links live in a
 * pool at a fixed offset per slot, so no change ever allocates. Insertions,
 * teleports and query starts search the skip list in O(log n) expected;
 * short moves swap the node past its neighbours in place, O(1) per step.
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "entry_block.h"

#define NONE UINT32_MAX
#define MAX_LEVEL 16 /* 4^16 = 2^32 slots: enough levels for any slot count */
/* A move farther than this many nodes goes through the skip list instead. */
#define LOCAL_STEPS 24
#define AXIS_X 0
#define AXIS_Y 1

/*
 * Per-slot records, split by use. A query's window walk is a chain of
 * dependent loads, so its nodes hold only what the walk reads, 24 bytes:
 * a 1k crowd's nodes fit a 32 KiB L1 cache. What moves and inserts read as
 * well (back links, the skip-list bookkeeping) is kept beside them.
 */
typedef struct cl_node {
    double key[2];    /* x, y */
    uint32_t next[2]; /* level 0; NONE: the end */
} cl_node;

typedef struct cl_slot {
    uint32_t prev[2]; /* level 0; NONE: the list head */
    uint32_t up;      /* first upper link of this slot in the pool */
    uint8_t levels;   /* 1..MAX_LEVEL, fixed per slot number */
    uint8_t used;     /* on the lists */
} cl_slot;

/* Links of one slot on one upper level of one axis: pool[up + 2 * (level - 1) + axis]. */
typedef struct cl_link {
    uint32_t prev, next;
} cl_link;

struct percept_backend {
    const percept_backend_host *host;
    cl_node *nodes; /* node_cap of them */
    cl_slot *slots; /* slot_cap of them; a slot exists once both arrays reach it */
    uint32_t node_cap, slot_cap;
    uint32_t count; /* entities in the index */
    cl_link *links; /* link_cap entries, link_len of them owned by slots */
    uint32_t link_cap, link_len;
    uint32_t head[2][MAX_LEVEL]; /* first node of each level of each axis */
    unsigned top;                /* highest height of any slot: where searches start */
    uint64_t rng;                /* xorshift state for slot heights */
};

static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* Geometric height with p = 1/4 from one draw: two bits per level. */
static unsigned draw_levels(uint64_t *state)
{
    uint64_t bits = next_random(state);
    unsigned h = 1;
    while (h < MAX_LEVEL && (bits & 3) == 0) {
        h++;
        bits >>= 2;
    }
    return h;
}

/* Link cells: the list head stands for NONE on the prev side (as in `prev == NONE`). */
static uint32_t *next_ref(percept_backend *b, int axis, unsigned level, uint32_t s)
{
    if (s == NONE)
        return &b->head[axis][level];
    if (level == 0)
        return &b->nodes[s].next[axis];
    return &b->links[b->slots[s].up + 2 * (level - 1) + (unsigned)axis].next;
}

static uint32_t *prev_ref(percept_backend *b, int axis, unsigned level, uint32_t s)
{
    if (level == 0)
        return &b->slots[s].prev[axis];
    return &b->links[b->slots[s].up + 2 * (level - 1) + (unsigned)axis].prev;
}

static uint32_t next_of(const percept_backend *b, int axis, unsigned level, uint32_t s)
{
    if (s == NONE)
        return b->head[axis][level];
    if (level == 0)
        return b->nodes[s].next[axis];
    return b->links[b->slots[s].up + 2 * (level - 1) + (unsigned)axis].next;
}

/*
 * Fill preds[level] with the last node of each level whose key is below k
 * (NONE: the head), searching from the top level down.
 */
static void search(const percept_backend *b, int axis, double k, uint32_t *preds)
{
    const cl_node *nodes = b->nodes;
    uint32_t cur = NONE;
    for (unsigned level = b->top; level-- > 0;) {
        for (;;) {
            uint32_t n = next_of(b, axis, level, cur);
            if (n == NONE || !(nodes[n].key[axis] < k))
                break;
            cur = n;
        }
        preds[level] = cur;
    }
}

static void link_after(percept_backend *b, int axis, unsigned level, uint32_t pred, uint32_t s)
{
    uint32_t *pn = next_ref(b, axis, level, pred);
    uint32_t n = *pn;
    *pn = s;
    *prev_ref(b, axis, level, s) = pred;
    *next_ref(b, axis, level, s) = n;
    if (n != NONE)
        *prev_ref(b, axis, level, n) = s;
}

static void unlink_level(percept_backend *b, int axis, unsigned level, uint32_t s)
{
    uint32_t p = *prev_ref(b, axis, level, s);
    uint32_t n = *next_ref(b, axis, level, s);
    *next_ref(b, axis, level, p) = n;
    if (n != NONE)
        *prev_ref(b, axis, level, n) = p;
}

/* Put s (already keyed, on no level of this axis) where the skip list says. */
static void insert_axis(percept_backend *b, int axis, uint32_t s)
{
    uint32_t preds[MAX_LEVEL];
    search(b, axis, b->nodes[s].key[axis], preds);
    for (unsigned level = 0; level < b->slots[s].levels; level++)
        link_after(b, axis, level, preds[level], s);
}

static void remove_axis(percept_backend *b, int axis, uint32_t s)
{
    for (unsigned level = 0; level < b->slots[s].levels; level++)
        unlink_level(b, axis, level, s);
}

/*
 * Swap s with its bottom-level successor t. Adjacent at the bottom means
 * adjacent on every level both reach, so swapping there keeps every level in
 * the bottom level's order; on levels only one of them reaches, nothing moves.
 */
static void swap_forward(percept_backend *b, int axis, uint32_t s)
{
    uint32_t t = b->nodes[s].next[axis];
    unsigned common =
        b->slots[s].levels < b->slots[t].levels ? b->slots[s].levels : b->slots[t].levels;
    for (unsigned level = 0; level < common; level++) {
        uint32_t p = *prev_ref(b, axis, level, s);
        uint32_t n = *next_ref(b, axis, level, t);
        *next_ref(b, axis, level, p) = t;
        *prev_ref(b, axis, level, t) = p;
        *next_ref(b, axis, level, t) = s;
        *prev_ref(b, axis, level, s) = t;
        *next_ref(b, axis, level, s) = n;
        if (n != NONE)
            *prev_ref(b, axis, level, n) = s;
    }
}

/*
 * s's key on this axis becomes k: walk it past its neighbours while they are
 * few, else take it out and put it back through the skip list. It stops at
 * the first place where prev <= k <= next, so ties cost no steps.
 */
static void move_axis(percept_backend *b, int axis, uint32_t s, double k)
{
    cl_node *nodes = b->nodes;
    nodes[s].key[axis] = k;
    unsigned steps = 0;
    uint32_t n;
    while ((n = nodes[s].next[axis]) != NONE && nodes[n].key[axis] < k) {
        if (++steps > LOCAL_STEPS)
            goto teleport;
        swap_forward(b, axis, s);
    }
    while ((n = b->slots[s].prev[axis]) != NONE && nodes[n].key[axis] > k) {
        if (++steps > LOCAL_STEPS)
            goto teleport;
        swap_forward(b, axis, n);
    }
    return;
teleport:
    remove_axis(b, axis, s);
    insert_axis(b, axis, s);
}

static percept_backend *crosslist_create(const percept_backend_setup *setup,
                                         percept_backend_error *error)
{
    if (setup->param_count > 0) {
        backend_set_error(error, 0, "unknown parameter (crosslist takes no parameters)");
        return NULL;
    }
    percept_backend *b = backend_new(setup, sizeof(*b), error);
    if (b == NULL)
        return NULL;
    b->host = setup->host;
    for (int axis = 0; axis < 2; axis++)
        for (unsigned level = 0; level < MAX_LEVEL; level++)
            b->head[axis][level] = NONE;
    /* A fixed seed: the same calls build the same lists, run after run. */
    b->rng = 0x9e3779b97f4a7c15u;
    return b;
}

static void crosslist_destroy(percept_backend *b)
{
    backend_free(b->host, b->links);
    backend_free(b->host, b->slots);
    backend_free(b->host, b->nodes);
    backend_free(b->host, b);
}

/*
 * Only new slot numbers need memory (nodes, records and their upper links);
 * moves, inserts and removals never do. Heights are drawn from a copy of the
 * generator and committed only when all three blocks are in hand, so a
 * failure leaves the backend as it was (with spare room, which
 * memory_usage() counts: each array keeps its own capacity).
 */
static int crosslist_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                             double y, double z, double range)
{
    (void)x, (void)y, (void)z, (void)range;
    if (slot >= slot_count)
        slot_count = slot == UINT32_MAX ? UINT32_MAX : slot + 1;
    if (slot_count <= b->slot_cap)
        return 0;
    uint32_t cap = backend_grown(b->slot_cap, slot_count, 16);
    if ((uint64_t)cap * sizeof(cl_node) > SIZE_MAX)
        return -1;

    uint64_t rng = b->rng;
    uint64_t need = b->link_len;
    for (uint32_t i = b->slot_cap; i < cap; i++)
        need += 2 * (draw_levels(&rng) - 1);
    /* `up` is a 32-bit offset; the links beyond link_len are spare room only. */
    if (need > UINT32_MAX ||
        backend_grow(b->host, (void **)&b->links, sizeof(cl_link), &b->link_cap, (uint32_t)need,
                     64) != 0 ||
        backend_grow(b->host, (void **)&b->nodes, sizeof(cl_node), &b->node_cap, cap, 16) != 0)
        return -1;
    cl_slot *slots = backend_host_alloc(b->host, b->slots, (size_t)cap * sizeof(cl_slot));
    if (slots == NULL)
        return -1;
    b->slots = slots;

    for (uint32_t i = b->slot_cap; i < cap; i++) {
        unsigned h = draw_levels(&b->rng);
        slots[i].levels = (uint8_t)h;
        slots[i].used = 0;
        slots[i].up = b->link_len;
        b->link_len += 2 * (h - 1);
        if (h > b->top)
            b->top = h;
    }
    b->slot_cap = cap;
    return 0;
}

static void crosslist_put(percept_backend *b, percept_slot slot, double x, double y, double z,
                          double range)
{
    (void)z, (void)range;
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    cl_slot *s = &b->slots[slot];
    if (s->used) {
        move_axis(b, AXIS_X, slot, x);
        move_axis(b, AXIS_Y, slot, y);
        return;
    }
    b->nodes[slot].key[AXIS_X] = x;
    b->nodes[slot].key[AXIS_Y] = y;
    insert_axis(b, AXIS_X, slot);
    insert_axis(b, AXIS_Y, slot);
    s->used = 1;
    b->count++;
}

static void crosslist_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || !b->slots[slot].used)
        return;
    remove_axis(b, AXIS_X, slot);
    remove_axis(b, AXIS_Y, slot);
    b->slots[slot].used = 0;
    b->count--;
}

/* The exact test of the relation, as the specification writes it (boundary included). */
static int within(double sx, double sy, double x, double y, double r2)
{
    double dx = sx - x, dy = sy - y;
    return dx * dx + dy * dy <= r2;
}

/*
 * Both axis windows start from a skip-list search. To pick the axis with
 * fewer entities in its window (a road along X has a huge Y window), the two
 * windows are first walked in lockstep on a sparse upper level (SAMPLE_LEVEL:
 * about one node in 16) until one of them leaves its window; only that
 * axis's window is then walked at the bottom level and reported. The cost is
 * O(log n + min(window X, window Y)) expected, plus a sixteenth for sampling.
 */
#define SAMPLE_LEVEL 2u
/* Sampled nodes kept per axis as segment starts (some 2,000 nodes of window);
 * past the last one kept, one chain walks on to the window's end. */
#define SEEDS_MAX 128u
/* Segments walked at once: fewer overlap fewer loads; more switch lanes more than they gain. */
#define LANES 4u

/* A lane's place in its segment: cur == stop == NONE, idle. */
typedef struct lane {
    uint32_t cur, stop;
} lane;

/* The segments [first, seeds[0]), [seeds[0], seeds[1]), ..., how many
 * are handed out, and the lanes still walking. */
typedef struct segments {
    uint32_t first;
    const uint32_t *seeds;
    unsigned n, taken, live;
} segments;

/* Gives the lane the next segment, or leaves it idle when none is left. */
static void lane_next_segment(lane *l, segments *sg)
{
    if (sg->taken < sg->n) {
        l->cur = sg->taken == 0 ? sg->first : sg->seeds[sg->taken - 1];
        l->stop = sg->seeds[sg->taken++];
    } else {
        l->cur = l->stop = NONE;
        sg->live--;
    }
}

/*
 * One step of one lane: its node is reported (kept when within r), or, at
 * its segment's end, the lane takes the next one. The walk calls it once
 * per lane, by name, so that each lane's place stays in a register rather
 * than each hop's load waiting on a store to the stack.
 */
static inline void lane_step(lane *l, segments *sg, const cl_node *nodes, int axis, double x,
                             double y, double r2, block_hits *hits, uint32_t *found)
{
    uint32_t s = l->cur;
    if (s == l->stop) {
        if (s != NONE)
            lane_next_segment(l, sg);
        return;
    }
    hits->slot[*found] = s;
    *found += (uint32_t)within(nodes[s].key[AXIS_X], nodes[s].key[AXIS_Y], x, y, r2);
    if (*found == BLOCK_HITS) {
        hits->count = *found;
        block_hits_flush(hits);
        *found = 0;
    }
    l->cur = nodes[s].next[axis];
}

/*
 * Reports the bottom-level nodes of `axis` from `first` up to seeds[n - 1],
 * excluded. A walk along one list is a chain of loads, each waiting for the
 * last; the sampled nodes cut the window into independent segments, and
 * LANES of them advance together, so that their loads overlap.
 */
static void walk_segments(const cl_node *nodes, int axis, uint32_t first, const uint32_t *seeds,
                          unsigned n, double x, double y, double r2, block_hits *hits)
{
    _Static_assert(LANES == 4, "walk_segments() steps four lanes by name");
    segments sg = {.first = first, .seeds = seeds, .n = n, .taken = 0, .live = LANES};
    lane l[LANES];
    for (unsigned k = 0; k < LANES; k++)
        lane_next_segment(&l[k], &sg);
    /* The batch's count stays in a register: kept in *hits, each find's
     * count would wait on the store of the last one. */
    uint32_t found = hits->count;
    while (sg.live > 0) {
        lane_step(&l[0], &sg, nodes, axis, x, y, r2, hits, &found);
        lane_step(&l[1], &sg, nodes, axis, x, y, r2, hits, &found);
        lane_step(&l[2], &sg, nodes, axis, x, y, r2, hits, &found);
        lane_step(&l[3], &sg, nodes, axis, x, y, r2, hits, &found);
    }
    hits->count = found;
}

static void crosslist_query(const percept_backend *b, double x, double y, double z, double r,
                            percept_backend_visit visit, void *ctx)
{
    (void)z; /* the planar test is a superset of the one in three dimensions */
    if (!(r >= 0) || x != x || y != y || b->count == 0)
        return; /* NaN compares false with everything: nothing is within it */
    const cl_node *nodes = b->nodes;
    double r2 = r * r;
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    /*
     * The window's ends bound the keys walked with the margin that bounds
     * grid's cells (backend_util.h); without a window, the lists are walked
     * whole. The finds are filtered by the host's own exact test.
     */
    backend_window w = {INFINITY, INFINITY, INFINITY};
    backend_query_window(x, y, r, &w);
    double hi[2] = {x + w.pad_x, y + w.pad_y};
    uint32_t preds[2][MAX_LEVEL];
    search(b, AXIS_X, x - w.pad_x, preds[AXIS_X]);
    search(b, AXIS_Y, y - w.pad_y, preds[AXIS_Y]);
    int axis = AXIS_X;
    /* The sampled nodes inside each window, in order: all of them lie on the
     * bottom level too, after its first node in the window. */
    uint32_t seeds[2][SEEDS_MAX];
    unsigned seed_count[2] = {0, 0};
    if (b->top > SAMPLE_LEVEL) {
        uint32_t cx = next_of(b, AXIS_X, SAMPLE_LEVEL, preds[AXIS_X][SAMPLE_LEVEL]);
        uint32_t cy = next_of(b, AXIS_Y, SAMPLE_LEVEL, preds[AXIS_Y][SAMPLE_LEVEL]);
        for (;;) {
            if (cx == NONE || nodes[cx].key[AXIS_X] > hi[AXIS_X])
                break;
            if (cy == NONE || nodes[cy].key[AXIS_Y] > hi[AXIS_Y]) {
                axis = AXIS_Y;
                break;
            }
            if (seed_count[AXIS_X] < SEEDS_MAX)
                seeds[AXIS_X][seed_count[AXIS_X]++] = cx;
            if (seed_count[AXIS_Y] < SEEDS_MAX)
                seeds[AXIS_Y][seed_count[AXIS_Y]++] = cy;
            cx = next_of(b, AXIS_X, SAMPLE_LEVEL, cx);
            cy = next_of(b, AXIS_Y, SAMPLE_LEVEL, cy);
        }
    }
    /* The finds go through a batch, without a branch (see entry_block.h). */
    uint32_t first = next_of(b, axis, 0, preds[axis][0]);
    unsigned n = seed_count[axis];
    walk_segments(nodes, axis, first, seeds[axis], n, x, y, r2, &hits);
    /* From the last sampled node (or the first) to the window's end. */
    for (uint32_t s = n > 0 ? seeds[axis][n - 1] : first;
         s != NONE && !(nodes[s].key[axis] > hi[axis]); s = nodes[s].next[axis])
        block_hits_add(&hits, s, within(nodes[s].key[AXIS_X], nodes[s].key[AXIS_Y], x, y, r2));
    block_hits_flush(&hits);
}

static size_t crosslist_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->node_cap * sizeof(cl_node) +
           (size_t)b->slot_cap * sizeof(cl_slot) + (size_t)b->link_cap * sizeof(cl_link);
}

BACKEND_DEFINE_OPS(crosslist, "crosslist",
                   "cross-linked X and Y sorted lists (sweep and prune) with skip-list search", 0)
