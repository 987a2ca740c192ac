/*
 * percept/backend.h - the plugin ABI: the only header a spatial-index backend
 * includes. A backend answers one question: which entities might be within
 * distance R of a point. One instance serves every sense configured with the
 * same backend and parameters. It knows nothing of senses, pairs or events;
 * the core owns those and filters every answer by exact distance.
 *
 * A backend is a shared object exporting exactly one symbol,
 * PERCEPT_BACKEND_ENTRY_SYMBOL: a function returning a constant
 * percept_backend_ops table, which the host checks before first use: not
 * NULL, the same ABI major version, a struct size holding every mandatory
 * operation, all of them present, and the name the backend was asked for
 * (the file NAME.so must say it is NAME).
 *
 * Versioning: the table only ever grows at its end. A new optional operation
 * raises the minor version; the host reads a field only when struct_size
 * covers it, so older plugins keep working. Any other change raises the
 * major version, and the host refuses plugins of another major version.
 */
#ifndef PERCEPT_BACKEND_H
#define PERCEPT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PERCEPT_BACKEND_ABI_MAJOR 2
#define PERCEPT_BACKEND_ABI_MINOR 0
#define PERCEPT_BACKEND_ABI_VERSION                                                                \
    (((uint32_t)PERCEPT_BACKEND_ABI_MAJOR << 16) | (uint32_t)PERCEPT_BACKEND_ABI_MINOR)

#define PERCEPT_BACKEND_ENTRY_SYMBOL "percept_backend_entry"

#if defined(__GNUC__) && __GNUC__ >= 4
#define PERCEPT_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define PERCEPT_BACKEND_EXPORT
#endif

/* A backend instance: the plugin's own type, opaque to the host. */
typedef struct percept_backend percept_backend;

/*
 * Entities are named by slot: a small dense integer the host assigns
 * (0 .. slot_count-1) and reuses after removal, so a backend can keep its
 * per-entity data in flat arrays indexed by slot. slot_count is a
 * high-water mark (one past the highest slot ever used), never decreasing;
 * every slot the host names is below it.
 */
typedef uint32_t percept_slot;

/* One `key = value` of the backend's config section, in file order. The
 * value is never NULL (maybe empty), without surrounding blanks or a
 * trailing comment. */
typedef struct percept_backend_param {
    const char *key;
    const char *value;
    int line; /* the line in the config file, for the host's messages */
} percept_backend_param;

/*
 * Memory services of the host, for every allocation: alloc(user, NULL, n)
 * allocates, alloc(user, p, n) resizes, alloc(user, p, 0) frees. A resize to
 * a smaller size may return NULL, and then the block is as it was: keep it.
 */
typedef struct percept_backend_host {
    void *(*alloc)(void *user, void *ptr, size_t size);
    void *user;
} percept_backend_host;

/* Everything a backend is created with. Valid only during create(), except host. */
typedef struct percept_backend_setup {
    const percept_backend_host *host;    /* valid until destroy() */
    double min_x, min_y, max_x, max_y;   /* world bounds; entities may still stand outside */
    const percept_backend_param *params; /* the backend's own keys, already minus the host's */
    size_t param_count;
} percept_backend_setup;

/*
 * Why create() failed: param_index is the offending parameter's index in
 * setup->params (-1 when none is to blame), text a short reason, e.g. "must
 * be a number greater than 0"; the host adds file, line, section and key.
 * The caller gets PERCEPT_ECONFIG for a parameter blamed or a setup refused
 * as a whole with a reason (bounds too large for the default size, say),
 * PERCEPT_ENOMEM when the host's allocator refused a request during
 * create(), whatever the reason says, and PERCEPT_EPLUGIN for a refusal
 * without a reason.
 */
typedef struct percept_backend_error {
    int param_index;
    char text[256];
} percept_backend_error;

/* Called by query() for each candidate slot. */
typedef void (*percept_backend_visit)(void *ctx, percept_slot slot);

typedef struct percept_backend_ops {
    /* Header: checked by the host before anything else is read. */
    uint32_t abi_version; /* PERCEPT_BACKEND_ABI_VERSION */
    uint32_t struct_size; /* sizeof(percept_backend_ops) as compiled by the plugin */
    const char *name;     /* equal to the plugin's file name without ".so" */
    const char *description; /* one line for people, or NULL; the host reads nothing from it */

    /* Create an instance from setup, validating every parameter: for an
     * unknown key or a bad value, fill *error and return NULL; when out of
     * memory, return NULL with error->param_index -1 (and any text). */
    percept_backend *(*create)(const percept_backend_setup *setup, percept_backend_error *error);
    void (*destroy)(percept_backend *backend);

    /*
     * Make sure the next insert() or update() cannot fail: grow whatever the
     * host's next change needs, for slots up to slot_count - 1 and for `slot`
     * placed at (x, y, z) with `range`. Return 0, or -1 when out of memory, with
     * nothing the host can observe changed. The host calls it before every
     * insert and update, so those return nothing. A successful reserve() may
     * be followed by no insert or update at all (another part of the host's
     * call failed): the next operation may be a reserve() for another slot,
     * a remove() or a query, so keep no state that waits for the change.
     * When the change goes ahead, the next call to this instance is the
     * insert() or update() of `slot` with the same x, y, z and range: at most
     * one reserve is outstanding. remove() must not need memory and comes
     * without a reserve(). insert(), update() and remove() may give memory
     * back (a smaller resize, a free), so long as a refused resize changes
     * nothing and what reserve() promised stays available.
     */
    int (*reserve)(percept_backend *backend, uint32_t slot_count, percept_slot slot, double x,
                   double y, double z, double range);

    /* Add `slot` at (x, y, z); range is its largest range among the senses
     * this instance serves (may be 0; a hint the host's queries do not rely on). */
    void (*insert)(percept_backend *backend, percept_slot slot, double x, double y, double z,
                   double range);
    /* `slot` is now at (x, y, z) with `range` (a move, a range change, or both). */
    void (*update)(percept_backend *backend, percept_slot slot, double x, double y, double z,
                   double range);
    /* `slot` leaves. */
    void (*remove)(percept_backend *backend, percept_slot slot);

    /*
     * Call visit(ctx, slot) for every entity within distance r of (x, y, z)
     * in three dimensions (dx*dx + dy*dy + dz*dz <= r*r). A superset is
     * allowed (the host filters by exact distance and ignores repeats), a
     * missing entity is not; the entity standing at (x, y, z) may be
     * reported. So a backend may index x and y alone and ignore z: the
     * planar distance never exceeds the one in three dimensions. Must not
     * allocate nor write anything: a world's tick threads query one
     * instance at once. From the host, x, y and z are finite,
     * of magnitude at most 1e15 (PERCEPT_COORD_LIMIT in percept.h), and r is
     * finite and not negative, maybe 0 or far larger than the world.
     */
    void (*query)(const percept_backend *backend, double x, double y, double z, double r,
                  percept_backend_visit visit, void *ctx);

    /*
     * Optional (NULL: percept_memory_usage() counts 0): the bytes the
     * instance holds from host->alloc, exactly, its record included, each
     * block at the size it was last given, also after a failed reserve()
     * (keep a capacity per array, not one for several). percept's
     * test_memory checks it byte for byte (docs/plugins.md).
     */
    size_t (*memory_usage)(const percept_backend *backend);

    /* Optional (0 says nothing): PERCEPT_BACKEND_QUERY_* bits, hints about
     * what a query costs, by which the host chooses its own work. */
    uint32_t query_hints;
} percept_backend_ops;

/*
 * A query costs about the entities within its square, however many the index
 * holds: a grid or towers, not a scan of every entity nor a walk along one
 * sorted axis. The host then finds short-sighted observers of a changing
 * entity by widening the change's query to their longest range (and queries
 * around an entity that perceives nothing itself) instead of keeping them in
 * its observer grid. Claim it only if true: from a backend that scans, the
 * host would pay a whole scan where its observer grid would have answered.
 */
#define PERCEPT_BACKEND_QUERY_LOCAL 1u

/* The size of the table up to and including the last mandatory operation. */
#define PERCEPT_BACKEND_OPS_MIN_SIZE                                                               \
    (offsetof(percept_backend_ops, query) + sizeof(((percept_backend_ops *)0)->query))

/* The entry point every backend exports, and its type for the host's dlsym. */
typedef const percept_backend_ops *(*percept_backend_entry_fn)(void);
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* PERCEPT_BACKEND_H */
