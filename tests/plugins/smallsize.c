/*
 * smallsize.c - broken test backend: its table claims to be 16 bytes long,
 * too small to hold the mandatory operations, so the host must refuse it.
 */
#include <percept/backend.h>

/* A do-nothing backend: never reached when the host checks the table first. */
struct percept_backend {
    const percept_backend_host *host;
};

static percept_backend *stub_create(const percept_backend_setup *setup,
                                    percept_backend_error *error)
{
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (b == NULL) {
        error->param_index = -1;
        error->text[0] = '\0';
        return NULL;
    }
    b->host = setup->host;
    return b;
}

static void stub_destroy(percept_backend *b)
{
    b->host->alloc(b->host->user, b, 0);
}

static int stub_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double range)
{
    (void)b;
    (void)slot_count;
    (void)slot;
    (void)x;
    (void)y;
    (void)range;
    return 0;
}

static void stub_place(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    (void)b;
    (void)slot;
    (void)x;
    (void)y;
    (void)range;
}

static void stub_remove(percept_backend *b, percept_slot slot)
{
    (void)b;
    (void)slot;
}

static void stub_query(const percept_backend *b, double x, double y, double r,
                       percept_backend_visit visit, void *ctx)
{
    (void)b;
    (void)x;
    (void)y;
    (void)r;
    (void)visit;
    (void)ctx;
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = 16,
    .name = "smallsize",
    .description = "test backend with a truncated table",
    .create = stub_create,
    .destroy = stub_destroy,
    .reserve = stub_reserve,
    .insert = stub_place,
    .update = stub_place,
    .remove = stub_remove,
    .query = stub_query,
};

/* Declared here as backend.h has no prototype for it (-Wmissing-prototypes). */
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
