/*
 * observer_grid.c - the reverse index of observers by cell (see observer_grid.h).
 */
#include "observer_grid.h"

#include <math.h>
#include <string.h>

#include "alloc.h"

/* Observers found, held back for the visit callback in batches of this many. */
#define OG_HITS 64

/* The bound of no observer: every point is infinitely far from it. */
#define EMPTY_BOUND ((og_bound){INFINITY, INFINITY, -INFINITY, -INFINITY, -1})

static void bound_add(og_bound *b, const og_observer *o)
{
    if (o->x < b->x0)
        b->x0 = o->x;
    if (o->x > b->x1)
        b->x1 = o->x;
    if (o->y < b->y0)
        b->y0 = o->y;
    if (o->y > b->y1)
        b->y1 = o->y;
    b->r2 = o->r2 > b->r2 ? o->r2 : b->r2;
}

/*
 * Whether (x, y) lies beyond the bound. Exact, never a wrong skip: for an
 * observer inside the box, each coordinate difference to the box is at
 * most that to the observer (subtraction rounds monotonically), so the
 * squared distance computed here never exceeds the one og_query() tests.
 */
static int beyond(const og_bound *b, double x, double y)
{
    double dx = x < b->x0 ? b->x0 - x : x > b->x1 ? x - b->x1 : 0;
    double dy = y < b->y0 ? b->y0 - y : y > b->y1 ? y - b->y1 : 0;
    return dx * dx + dy * dy > b->r2;
}

int og_init(const percept_allocator *a, observer_grid *g, const percept_bounds *b, double cell_size,
            unsigned senses)
{
    memset(g, 0, sizeof *g);
    g->senses = senses;
    double w = b->max_x - b->min_x, h = b->max_y - b->min_y;
    if (cell_size <= 0) {
        /* 32 cells along the longer side: coarse enough that a long-sighted
         * observer's reach spans few cells, fine enough to prune most of the
         * world. */
        cell_size = (w > h ? w : h) / 32;
        if (!(cell_size > 0))
            cell_size = 1;
    }
    double cols = floor(w / cell_size) + 1, rows = floor(h / cell_size) + 1;
    if (cols * rows > OG_MAX_CELLS)
        return -2;
    g->min_x = b->min_x;
    g->min_y = b->min_y;
    g->near_top = -1;
    /* Levels until one has at most OG_REACH_CELLS cells, where every
     * observer fits: its reach cannot cover more cells than there are. */
    size_t n = 0;
    for (double size = cell_size; g->level_count < OG_MAX_LEVELS; size *= OG_LEVEL_FACTOR) {
        og_level *lv = &g->levels[g->level_count++];
        lv->cell_size = size;
        lv->inv_cell = 1.0 / size;
        lv->cols = (int32_t)(floor(w / size) + 1);
        lv->rows = (int32_t)(floor(h / size) + 1);
        lv->first = (uint32_t)n;
        n += (size_t)lv->cols * (size_t)lv->rows;
        if ((size_t)lv->cols * (size_t)lv->rows <= OG_REACH_CELLS)
            break;
    }
    g->cells = pc_alloc(a, n * sizeof *g->cells);
    if (!g->cells)
        return -1;
    g->cell_count = n;
    for (size_t i = 0; i < n; i++)
        g->cells[i] = (og_cell){.bound = EMPTY_BOUND};
    return 0;
}

void og_set_near(observer_grid *g, int near)
{
    g->near_limit = near ? OG_NEAR_FACTOR * g->levels[0].cell_size : 0;
}

void og_free(const percept_allocator *a, observer_grid *g)
{
    for (size_t i = 0; g->cells && i < g->cell_count; i++) {
        pc_free(a, g->cells[i].reach);
        pc_free(a, g->cells[i].obs);
    }
    pc_free(a, g->cells);
    pc_free(a, g->slots);
    memset(g, 0, sizeof *g);
}

size_t og_bytes(const observer_grid *g)
{
    return g->slot_cap * sizeof *g->slots + g->cell_bytes + g->cell_count * sizeof *g->cells;
}

int og_reserve_slots(const percept_allocator *a, observer_grid *g, size_t slot_count)
{
    void *slots = g->slots;
    if (pc_grow(a, &slots, sizeof *g->slots, &g->slot_cap, slot_count))
        return -1;
    g->slots = slots;
    return 0;
}

void og_clear_slot(observer_grid *g, uint32_t slot)
{
    g->slots[slot] = (og_slot){{.cell = OG_NONE, .x1 = -1, .y1 = -1, .near_class = -1}, OG_NONE};
}

/* Column (or row) of a coordinate, clamped into the grid. */
static int32_t clamp_index(double v, double origin, double inv, int32_t n)
{
    double f = floor((v - origin) * inv);
    if (!(f >= 0)) /* also catches NaN, which never reaches here */
        return 0;
    if (f >= n - 1)
        return n - 1;
    return (int32_t)f;
}

/* The index in cells[] of a level's cell at column x, row y. */
static uint32_t cell_at(const og_level *lv, int32_t x, int32_t y)
{
    return lv->first + (uint32_t)y * (uint32_t)lv->cols + (uint32_t)x;
}

/* The largest of `ranges` (indexed by sense) in the grid's senses; 0 for none. */
static double og_range(const observer_grid *g, const double *ranges)
{
    double range = 0;
    for (unsigned senses = g->senses; senses; senses &= senses - 1) {
        int s = __builtin_ctz(senses);
        if (ranges[s] > range)
            range = ranges[s];
    }
    return range;
}

/*
 * How far from v, along one axis, an observer of range R must reach. Not R
 * itself: the relation rounds the difference of the coordinates, so a target
 * a few ulps beyond v - R can still be within range (an observer at y = 128
 * with range 64 perceives a target at y = 63.99999999999999). R is widened
 * by the margin backend_query_window() (plugins/backend_util.h) derives.
 */
static double reach_pad(double v, double range)
{
    return range + (fabs(v) + range) * 4e-15 + 1e-150;
}

og_registration og_registration_for(const observer_grid *g, double x, double y,
                                    const double *ranges)
{
    og_registration r = {.cell = OG_NONE, .x1 = -1, .y1 = -1, .near_class = -1};
    double range = og_range(g, ranges);
    if (!(range > 0))
        return r;
    if (range <= g->near_limit) {
        double c = floor(range / g->near_limit * OG_NEAR_CLASSES);
        r.cell = OG_NEAR;
        r.near_class = c < OG_NEAR_CLASSES ? (int32_t)c : OG_NEAR_CLASSES - 1;
        return r;
    }
    /* The cells under [x - px, x + px] x [y - py, y + py]: see reach_pad(). */
    double px = reach_pad(x, range), py = reach_pad(y, range);
    for (r.level = 0;; r.level++) {
        const og_level *lv = &g->levels[r.level];
        r.x0 = clamp_index(x - px, g->min_x, lv->inv_cell, lv->cols);
        r.x1 = clamp_index(x + px, g->min_x, lv->inv_cell, lv->cols);
        r.y0 = clamp_index(y - py, g->min_y, lv->inv_cell, lv->rows);
        r.y1 = clamp_index(y + py, g->min_y, lv->inv_cell, lv->rows);
        if ((int64_t)(r.x1 - r.x0 + 1) * (r.y1 - r.y0 + 1) <= OG_REACH_CELLS ||
            r.level == g->level_count - 1)
            break;
    }
    const og_level *lv = &g->levels[r.level];
    int32_t cx = clamp_index(x, g->min_x, lv->inv_cell, lv->cols);
    int32_t cy = clamp_index(y, g->min_y, lv->inv_cell, lv->rows);
    r.cell = cell_at(lv, cx, cy);
    return r;
}

/* The cell at column x, row y of a registration's level. */
static og_cell *reached(observer_grid *g, const og_registration *r, int32_t x, int32_t y)
{
    return &g->cells[cell_at(&g->levels[r->level], x, y)];
}

/* See OG_SHRINK_FROM: a cell a crowd stood in, or that its observers
 * reached, would otherwise keep the crowd's size until the world is closed. */
static void *give_back(const percept_allocator *a, observer_grid *g, void *array, size_t elem,
                       uint32_t len, uint32_t *cap)
{
    if (*cap > OG_SHRINK_FROM && len <= *cap / 4) {
        g->cell_bytes -= *cap * elem;
        array = pc_give_back(a, array, elem, len, cap);
        g->cell_bytes += *cap * elem;
    }
    return array;
}

/* Room for one more entry in a cell's array, counted in g->cell_bytes. */
static int make_room(const percept_allocator *a, observer_grid *g, void **array, size_t elem,
                     uint32_t len, uint32_t *cap)
{
    if (len < *cap)
        return 0;
    size_t grown = *cap;
    if (pc_grow(a, array, elem, &grown, (size_t)len + 1))
        return -1;
    g->cell_bytes += (grown - *cap) * elem;
    *cap = (uint32_t)grown;
    return 0;
}

/* Adds one to `source`'s count in `cell`'s reach list. */
static int reach_add(const percept_allocator *a, observer_grid *g, og_cell *cell, uint32_t source)
{
    for (uint32_t i = 0; i < cell->reach_len; i++) {
        if (cell->reach[i].cell == source) {
            cell->reach[i].count++;
            return 0;
        }
    }
    void *reach = cell->reach;
    if (make_room(a, g, &reach, sizeof(og_reach), cell->reach_len, &cell->reach_cap))
        return -1;
    cell->reach = reach;
    cell->reach[cell->reach_len++] = (og_reach){source, 1};
    return 0;
}

static void reach_drop(const percept_allocator *a, observer_grid *g, og_cell *cell, uint32_t source)
{
    for (uint32_t i = 0; i < cell->reach_len; i++) {
        if (cell->reach[i].cell == source) {
            if (--cell->reach[i].count == 0) {
                cell->reach[i] = cell->reach[--cell->reach_len];
                cell->reach = give_back(a, g, cell->reach, sizeof(og_reach), cell->reach_len,
                                        &cell->reach_cap);
            }
            return;
        }
    }
}

/* Whether the registration puts the observer in a cell's array. */
static int has_home(const og_registration *r)
{
    return r->cell != OG_NONE && r->cell != OG_NEAR;
}

static void drop_all(const percept_allocator *a, observer_grid *g, const og_registration *r)
{
    if (!has_home(r))
        return;
    for (int32_t y = r->y0; y <= r->y1; y++)
        for (int32_t x = r->x0; x <= r->x1; x++)
            reach_drop(a, g, reached(g, r, x, y), r->cell);
}

int og_stage(const percept_allocator *a, observer_grid *g, uint32_t slot,
             const og_registration *next)
{
    if (!has_home(next) || og_same(&g->slots[slot].reg, next))
        return 0; /* near observers are only counted: nothing to allocate */
    og_cell *home = &g->cells[next->cell];
    if (next->cell != g->slots[slot].reg.cell) {
        /* Room for the observer in its new cell; spare capacity is invisible. */
        void *obs = home->obs;
        if (make_room(a, g, &obs, sizeof(og_observer), home->obs_len + home->arriving,
                      &home->obs_cap))
            return -1;
        home->obs = obs;
        home->arriving++;
    }
    for (int32_t y = next->y0; y <= next->y1; y++) {
        for (int32_t x = next->x0; x <= next->x1; x++) {
            if (reach_add(a, g, reached(g, next, x, y), next->cell)) {
                /* Undo the cells done so far: those before (x, y) in row order. */
                for (int32_t uy = next->y0; uy <= y; uy++)
                    for (int32_t ux = next->x0; ux <= next->x1 && (uy < y || ux < x); ux++)
                        reach_drop(a, g, reached(g, next, ux, uy), next->cell);
                if (next->cell != g->slots[slot].reg.cell)
                    home->arriving--;
                return -1;
            }
        }
    }
    return 0;
}

void og_unstage(const percept_allocator *a, observer_grid *g, uint32_t slot,
                const og_registration *next)
{
    if (og_same(&g->slots[slot].reg, next))
        return;
    drop_all(a, g, next);
    if (has_home(next) && next->cell != g->slots[slot].reg.cell)
        g->cells[next->cell].arriving--;
}

static void leave_cell(const percept_allocator *a, observer_grid *g, uint32_t slot)
{
    og_cell *c = &g->cells[g->slots[slot].reg.cell];
    uint32_t i = g->slots[slot].index;
    c->obs[i] = c->obs[--c->obs_len];
    if (i < c->obs_len)
        g->slots[c->obs[i].slot].index = i;
    g->slots[slot].index = OG_NONE;
    c->bound = EMPTY_BOUND;
    for (uint32_t k = 0; k < c->obs_len; k++)
        bound_add(&c->bound, &c->obs[k]);
    /* The observer's new home is another cell (or list), whose room
     * og_stage() made: this one's may go. */
    c->obs = give_back(a, g, c->obs, sizeof(og_observer), c->obs_len + c->arriving, &c->obs_cap);
}

void og_commit(const percept_allocator *a, observer_grid *g, uint32_t slot,
               const og_registration *next, double x, double y, double z, const double *range)
{
    og_slot *s = &g->slots[slot];
    if (!og_same(&s->reg, next)) {
        drop_all(a, g, &s->reg);
        if (s->reg.cell != next->cell) {
            if (has_home(&s->reg)) {
                leave_cell(a, g, slot);
                g->levels[s->reg.level].observers--;
            }
            if (has_home(next)) {
                og_cell *c = &g->cells[next->cell]; /* og_stage() made the room */
                c->arriving--;
                s->index = c->obs_len;
                c->obs[c->obs_len++].slot = slot;
                g->levels[next->level].observers++;
            }
        }
        /* Near observers are only counted, by class. */
        if (s->reg.cell == OG_NEAR) {
            g->near_count[s->reg.near_class]--;
            while (g->near_top >= 0 && g->near_count[g->near_top] == 0)
                g->near_top--;
        }
        if (next->cell == OG_NEAR) {
            g->near_count[next->near_class]++;
            if (next->near_class > g->near_top)
                g->near_top = next->near_class;
        }
        s->reg = *next;
    }
    if (has_home(&s->reg)) {
        og_cell *home = &g->cells[s->reg.cell];
        og_observer *o = &home->obs[s->index];
        o->x = x;
        o->y = y;
        o->z = z;
        double r = og_range(g, range);
        o->r2 = r > 0 ? r * r : -1;
        bound_add(&home->bound, o);
    }
}

double og_near_radius(const observer_grid *g)
{
    if (g->near_top < 0)
        return 0;
    /* The top of the highest class, widened by far more than the rounding
     * that placed a range in its class. */
    return (g->near_top + 1) * (g->near_limit / OG_NEAR_CLASSES) * (1 + 1e-9);
}

void og_query(const observer_grid *g, double x, double y, double z, unsigned senses,
              double covered2, og_visit visit, void *ctx)
{
    (void)senses; /* an observer's test covers all its senses: a superset */
    uint32_t hit[OG_HITS];
    unsigned nhit = 0;
    for (int l = 0; l < g->level_count; l++) {
        const og_level *lv = &g->levels[l];
        if (lv->observers == 0)
            continue;
        int32_t cx = clamp_index(x, g->min_x, lv->inv_cell, lv->cols);
        int32_t cy = clamp_index(y, g->min_y, lv->inv_cell, lv->rows);
        const og_cell *cell = &g->cells[cell_at(lv, cx, cy)];
        /* The cells whose observers reach this one. */
        for (uint32_t i = 0; i < cell->reach_len; i++) {
            const og_cell *source = &g->cells[cell->reach[i].cell];
            if (beyond(&source->bound, x, y))
                continue;
            for (uint32_t k = 0; k < source->obs_len; k++) {
                const og_observer *o = &source->obs[k];
                double dx = x - o->x, dy = y - o->y, dz = z - o->z, d2 = dx * dx + dy * dy;
                /* Gathered without a branch: in a crowd, whether an observer
                 * reaches the point is a coin toss to the branch predictor. */
                hit[nhit] = o->slot;
                nhit += (unsigned)((d2 <= o->r2) & (d2 + dz * dz > covered2));
                if (nhit == OG_HITS) {
                    for (unsigned h = 0; h < nhit; h++)
                        visit(ctx, hit[h]);
                    nhit = 0;
                }
            }
        }
    }
    for (unsigned h = 0; h < nhit; h++)
        visit(ctx, hit[h]);
}
