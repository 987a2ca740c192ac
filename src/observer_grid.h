/*
 * observer_grid.h - the reverse index of the senses that share an observer
 * cell size: "who perceives a target standing here?". A coarse grid over the
 * world bounds; each cell keeps the observers standing in it (positions and
 * squared ranges, scanned contiguously) and a reach list: the cells holding
 * observers whose largest range among the grid's senses reaches this cell,
 * with how many do. A target checks only the observers of the cells its
 * cell's reach list names, whatever the mix of ranges.
 *
 * A long-sighted observer would need an entry in very many reach lists, paid
 * again whenever it changes cells. So the grid has levels, each
 * OG_LEVEL_FACTOR times as coarse as the one below: an observer stands in
 * the finest level where its reach covers at most OG_REACH_CELLS cells, and
 * a target checks its cell's reach list on every level holding observers.
 *
 * With a backend that answers small queries cheaply
 * (PERCEPT_BACKEND_QUERY_LOCAL), near observers, whose ranges are all at
 * most OG_NEAR_FACTOR cells, are only counted here: anyone they perceive
 * stands within og_near_radius() of them, so the core finds them with one
 * backend query of that radius around the target, reading the cells its
 * forward query has just read. With another backend the core keeps them in
 * a second grid (near_of in world.h), read only when its query of a target
 * did not reach og_near_radius().
 *
 * Positions outside the bounds fall into the edge cells: clamping is
 * monotone, so the answer stays a superset of the truth.
 *
 * Changes are staged so a world call can stay atomic: og_stage() makes all
 * the allocations a new registration needs and can fail; og_commit() and
 * og_unstage() cannot. A tick stages many observers before it commits any.
 */
#ifndef PERCEPT_OBSERVER_GRID_H
#define PERCEPT_OBSERVER_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

#define OG_NONE UINT32_MAX
#define OG_REACH_CELLS 64
#define OG_LEVEL_FACTOR 4
/* Enough levels to come down to OG_REACH_CELLS cells from OG_MAX_CELLS. */
#define OG_MAX_LEVELS 12
/* A cell's arrays (observers, reach list) with room for this many entries or
 * fewer keep it, even empty: observers cross cells all the time. Larger ones
 * give room back once they hold a quarter of it or less. */
#define OG_SHRINK_FROM 8
/* The registration of a near observer: see the top. */
#define OG_NEAR (UINT32_MAX - 2)
#define OG_NEAR_FACTOR 1.25
/* Near observers are counted in this many range classes, so the near radius
 * follows the longest near range present, shrinking when it leaves. */
#define OG_NEAR_CLASSES 32

typedef struct og_reach {
    uint32_t cell;  /* a cell holding observers that reach here */
    uint32_t count; /* how many of its observers do */
} og_reach;

/* An observer standing in a cell: what the exact test needs, together. */
typedef struct og_observer {
    double x, y, z;
    /* The largest of its ranges in the grid's senses, squared as the core's
     * test squares it; -1 (never reached) when it has none. */
    double r2;
    uint32_t slot;
} og_observer;

/* A bound on what a cell's observers can reach: the box around their
 * positions and their largest squared range. A query skips a cell whose
 * bound is beyond the target without reading its observers: a reach list is
 * per cell, and many cells it lists cannot reach a given point. The box only
 * grows while observers stay, and is made tight again when one leaves. */
typedef struct og_bound {
    double x0, y0, x1, y1, r2;
} og_bound;

typedef struct og_cell {
    og_observer *obs; /* the observers standing in the cell */
    uint32_t obs_len, obs_cap;
    uint32_t arriving; /* observers staged into the cell: obs keeps room for them */
    uint32_t reach_len, reach_cap;
    og_reach *reach;
    og_bound bound;
} og_cell;

/* Where one observer is registered: its cell and the cells it reaches. */
typedef struct og_registration {
    /* An index into cells[], whatever the level; OG_NONE: not registered
     * (range 0); OG_NEAR: counted in near_count[near_class] only. */
    uint32_t cell;
    int32_t x0, y0, x1, y1; /* the cells it reaches, in its level's columns and rows */
    int32_t near_class;
    int32_t level;
} og_registration;

typedef struct og_slot {
    og_registration reg;
    uint32_t index; /* its place in its cell's obs array */
} og_slot;

/* One level: a grid over the world bounds, its cells a run of cells[]. */
typedef struct og_level {
    double cell_size, inv_cell;
    int32_t cols, rows;
    uint32_t first;     /* its first cell in cells[] */
    uint32_t observers; /* how many stand in its cells: a query skips a level without */
} og_level;

typedef struct observer_grid {
    unsigned senses; /* PERCEPT_SENSE_BIT()s of the senses it indexes */
    double min_x, min_y;
    og_level levels[OG_MAX_LEVELS]; /* the finest first */
    int level_count;
    og_cell *cells; /* every level's */
    size_t cell_count;
    size_t cell_bytes; /* what the cells' arrays hold, kept as they change */
    og_slot *slots;    /* indexed by entity slot */
    size_t slot_cap;
    double near_limit; /* OG_NEAR_FACTOR * the finest cell size, or 0: no observer is near */
    uint32_t near_count[OG_NEAR_CLASSES];
    int32_t near_top; /* highest class with a near observer, -1 for none */
} observer_grid;

/* Largest number of cells the finest level may have. */
#define OG_MAX_CELLS (1u << 22)

/* cell_size 0 picks one from the bounds. The grid keeps every observer
 * until og_set_near() says otherwise. Returns 0, -1 out of memory, -2 too
 * many cells. */
int og_init(const percept_allocator *a, observer_grid *g, const percept_bounds *b, double cell_size,
            unsigned senses);
/* Whether observers may be near (see the top), or the grid keeps every
 * observer. Set once the senses sharing the grid are known, before any
 * observer is registered. */
void og_set_near(observer_grid *g, int near);
void og_free(const percept_allocator *a, observer_grid *g);
/* Bytes the grid holds from its allocator, in constant time: the arrays'
 * bytes are counted as they change. */
size_t og_bytes(const observer_grid *g);
/* Make the per-slot table hold `slot_count` slots. */
int og_reserve_slots(const percept_allocator *a, observer_grid *g, size_t slot_count);
/* A slot's starting state (not registered); call before its first og_stage(). */
void og_clear_slot(observer_grid *g, uint32_t slot);

/* The registration an observer at (x, y) with these ranges needs (cell
 * OG_NONE when every range of the grid's senses is 0). */
og_registration og_registration_for(const observer_grid *g, double x, double y,
                                    const double *range);
static inline int og_same(const og_registration *a, const og_registration *b)
{
    return a->cell == b->cell && a->near_class == b->near_class &&
           (a->cell == OG_NONE ||
            (a->x0 == b->x0 && a->y0 == b->y0 && a->x1 == b->x1 && a->y1 == b->y1));
}

/* Count `next` in the reach lists, allocating as needed (nothing to do when
 * it is the slot's registration). 0, or -1 out of memory: nothing changed. */
int og_stage(const percept_allocator *a, observer_grid *g, uint32_t slot,
             const og_registration *next);
/* Take back a successful og_stage(). Never fails (it may give room back). */
void og_unstage(const percept_allocator *a, observer_grid *g, uint32_t slot,
                const og_registration *next);
/* Make a staged `next` the slot's registration, dropping the old one, and
 * record the observer's position and ranges. Never fails: the arrays it
 * leaves may give room back (OG_SHRINK_FROM), keeping it if that fails. */
void og_commit(const percept_allocator *a, observer_grid *g, uint32_t slot,
               const og_registration *next, double x, double y, double z, const double *range);

/* Call visit(ctx, observer) for the far observers whose largest range
 * reaches (x, y, z) in the plane (dx*dx + dy*dy <= R*R: a superset of those
 * that perceive a target there, in any of `senses`), and that stand beyond
 * what the caller has met already: dx*dx + dy*dy + dz*dz > covered2. A
 * backend query of radius r covers r*r, whether its index is planar or not
 * (-1 covers nothing). */
typedef void (*og_visit)(void *ctx, uint32_t observer);
void og_query(const observer_grid *g, double x, double y, double z, unsigned senses,
              double covered2, og_visit visit, void *ctx);

/* A radius within which every near observer's ranges lie (0 when there is none). */
double og_near_radius(const observer_grid *g);

#endif
