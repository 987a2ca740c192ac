/*
 * observer_grid.h - the reverse index of the senses that share an observer
 * cell size: "who perceives a target standing here?". A coarse grid over the
 * world bounds; each cell keeps the observers standing in it (a flat array
 * of their positions and squared ranges per sense, scanned contiguously) and
 * a reach list: the cells holding observers whose largest range among the
 * grid's senses can reach this cell, each with the number of such observers.
 * A moving target looks up its cell's reach list and checks only the
 * observers of those cells, whatever the mix of ranges, instead of scanning
 * the world.
 *
 * Long-sighted observers would each need an entry in very many cells' reach
 * lists, paid again whenever they change cells. So the grid has levels: the
 * first with the configured cell size, each next one with cells
 * OG_LEVEL_FACTOR times as wide, up to one of at most OG_REACH_CELLS cells.
 * An observer stands in the finest level where its reach covers at most
 * OG_REACH_CELLS cells, and a target checks its cell's reach list on every
 * level that holds observers. A world of NPCs and 4x-sighted players keeps
 * its players one level up, a few reach entries each, instead of on a list
 * every target would scan whole.
 *
 * When the senses' backend answers small queries cheaply (it says so with
 * PERCEPT_BACKEND_QUERY_LOCAL), observers whose range is short, at most
 * OG_NEAR_FACTOR cells, are not kept here at all, only counted by range:
 * anyone they perceive stands within og_near_radius() of them, so the core
 * finds them with one backend query of that radius around the target,
 * reading the cells its forward query has just read, instead of scanning
 * observer records and keeping a reach entry per cell for every step. The
 * grid holds the far-sighted. With another backend the core keeps the near
 * observers in a second grid (near_of in world.h), which it reads only when
 * its query of a target did not reach og_near_radius().
 *
 * Positions outside the bounds fall into the edge cells; since that clamping
 * is monotone, an observer's clamped reach still covers every clamped cell
 * it can reach, so the answer stays a superset of the truth.
 *
 * Changes are staged so a world call can stay atomic: og_stage() makes all
 * the allocations an observer's new registration needs and can fail;
 * og_commit() and og_unstage() cannot.
 */
#ifndef PERCEPT_OBSERVER_GRID_H
#define PERCEPT_OBSERVER_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

#define OG_NONE UINT32_MAX
/* An observer stands in the finest level where its reach covers at most
 * this many cells: each is an entry in a reach list, paid again whenever it
 * changes cells, so a tiny observer cell cannot make one observer cost
 * thousands of updates per move. */
#define OG_REACH_CELLS 64
/* Each level's cells are this many times as wide as the level below. */
#define OG_LEVEL_FACTOR 4
/* Enough levels to come down to OG_REACH_CELLS cells from OG_MAX_CELLS. */
#define OG_MAX_LEVELS 12
/* A cell's arrays (observers, reach list) with room for this many entries or
 * fewer keep it, even empty: observers cross cells all the time, and
 * resizing on each crossing would cost a call. Larger ones give room back
 * once they hold a quarter of it or less. */
#define OG_SHRINK_FROM 8
/* The registration of a near observer (see the top of this file). */
#define OG_NEAR (UINT32_MAX - 2)
/* Near: every range among the grid's senses at most this many cell sizes. */
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
    double x, y;
    /* Each sense's range squared, exactly as the core's test squares it; -1
     * (never reached) for a range of 0 or a sense of another grid. */
    double r2[PERCEPT_SENSE_COUNT];
    uint32_t slot;
} og_observer;

/*
 * A bound on what a cell's observers can reach: the box around their
 * positions and their largest squared range. A target farther from the box
 * than that is out of every one's range, so a query skips the cell without
 * reading its observers (a reach list is per cell, the target a point: about
 * half the cells it lists cannot reach a given point). The box only grows
 * while observers stay, and is made tight again when one leaves.
 */
typedef struct og_bound {
    double x0, y0, x1, y1, r2;
} og_bound;

typedef struct og_cell {
    og_observer *obs; /* the observers standing in the cell */
    uint32_t obs_len, obs_cap;
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
/* near: whether observers may be near (only counted here: the core finds
 * them with a backend query, or in a grid of its near observers), or the
 * grid keeps every observer. Set once the senses sharing the grid are
 * known, before any observer is registered. */
void og_set_near(observer_grid *g, int near);
void og_free(const percept_allocator *a, observer_grid *g);
/* Bytes the grid holds from its allocator: cells, their arrays, the
 * per-slot table. Constant time: the arrays' bytes are counted as they change. */
size_t og_bytes(const observer_grid *g);
/* Make the per-slot table hold `slot_count` slots. */
int og_reserve_slots(const percept_allocator *a, observer_grid *g, size_t slot_count);
/* A slot's starting state (not registered); call before its first og_stage(). */
void og_clear_slot(observer_grid *g, uint32_t slot);

/* The registration an observer at (x, y) with these ranges needs (cell
 * OG_NONE when every range of the grid's senses is 0). */
og_registration og_registration_for(const observer_grid *g, double x, double y,
                                    const double range[PERCEPT_SENSE_COUNT]);
static inline int og_same(const og_registration *a, const og_registration *b)
{
    return a->cell == b->cell && a->near_class == b->near_class &&
           (a->cell == OG_NONE ||
            (a->x0 == b->x0 && a->y0 == b->y0 && a->x1 == b->x1 && a->y1 == b->y1));
}

/*
 * Count `next` in the reach lists (allocating as needed). Returns 0 or -1
 * out of memory, in which case nothing changed. Does nothing when `next`
 * equals the slot's current registration.
 */
int og_stage(const percept_allocator *a, observer_grid *g, uint32_t slot,
             const og_registration *next);
/* Take back a successful og_stage(). Never fails (it may give room back). */
void og_unstage(const percept_allocator *a, observer_grid *g, uint32_t slot,
                const og_registration *next);
/* Make a staged `next` the slot's registration, dropping the old one, and
 * record the observer's position and ranges. Never fails: the arrays the old
 * registration leaves with a quarter of their room or less give room back
 * (above OG_SHRINK_FROM entries of it), and keep it if the allocator refuses. */
void og_commit(const percept_allocator *a, observer_grid *g, uint32_t slot,
               const og_registration *next, double x, double y,
               const double range[PERCEPT_SENSE_COUNT]);

/*
 * Call visit(ctx, observer) for exactly the far observers whose range in one
 * of the senses in `senses` reaches (x, y) (dx*dx + dy*dy <= r*r, the
 * relation's own test) and that stand farther from it than the caller has
 * covered: dx*dx + dy*dy > covered2. The caller has met every entity within
 * that already (a backend query of radius r gives covered2 = r*r; -1 covers
 * nothing), so in a crowd most observers need no visit.
 */
typedef void (*og_visit)(void *ctx, uint32_t observer);
void og_query(const observer_grid *g, double x, double y, unsigned senses, double covered2,
              og_visit visit, void *ctx);

/* A radius within which every near observer's ranges lie (0: there is
 * none): a target's near observers all stand within it of the target. */
double og_near_radius(const observer_grid *g);

#endif
