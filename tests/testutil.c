/*
 * testutil.c - what the API suites share (testutil.h).
 */
#include "testutil.h"

#include <dirent.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tools/splitmix.h"

/* ------------------------------------------------------------------------ */
/* Backends under test                                                       */

#define TU_MAX_BACKENDS 32

static char backend_text[1024];
static const char *backend_names[TU_MAX_BACKENDS];
static size_t backend_total;
static int backends_parsed;

/* PERCEPT_TEST_BACKENDS, else every NAME.so in the first directory of
 * PERCEPT_PLUGIN_PATH, else bruteforce; said on stderr, so that a test of one
 * plugin cannot pass by quietly testing another. */
static void parse_backends(void)
{
    if (backends_parsed++)
        return;
    const char *env = getenv("PERCEPT_TEST_BACKENDS"), *path = getenv("PERCEPT_PLUGIN_PATH");
    size_t used = 0;
    if (env != NULL && strspn(env, " \t\n") != strlen(env)) {
        used = (size_t)snprintf(backend_text, sizeof backend_text, "%s", env);
    } else if (path != NULL) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)strcspn(path, ":"), path);
        DIR *d = opendir(dir);
        for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
            size_t n = strlen(e->d_name);
            if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0 && used + n < sizeof backend_text)
                used += (size_t)snprintf(backend_text + used, sizeof backend_text - used, "%.*s ",
                                         (int)(n - 3), e->d_name);
        }
        if (d != NULL)
            closedir(d);
    }
    if (used == 0)
        snprintf(backend_text, sizeof backend_text, "bruteforce");
    fprintf(stderr, "backends under test: %s\n", backend_text);
    for (char *p = backend_text; backend_total < TU_MAX_BACKENDS;) {
        p += strspn(p, " \t\n");
        if (*p == '\0')
            break;
        backend_names[backend_total++] = p;
        p += strcspn(p, " \t\n");
        if (*p != '\0')
            *p++ = '\0';
    }
}

size_t tu_backend_count(void)
{
    parse_backends();
    return backend_total;
}

const char *tu_backend_name(size_t index)
{
    parse_backends();
    return index < backend_total ? backend_names[index] : NULL;
}

static const char *backend_now;

void tu_for_each_backend(void (*fn)(const char *backend))
{
    size_t n = tu_backend_count();
    for (size_t i = 0; i < n; i++) {
        backend_now = tu_backend_name(i);
        fn(backend_now);
    }
    backend_now = NULL;
}

int tu_report_backend(void **state)
{
    (void)state;
    if (backend_now != NULL) {
        print_error("  (failed with backend '%s')\n", backend_now);
        backend_now = NULL;
    }
    return 0;
}

const char *tu_size_key(const char *backend)
{
    if (!strcmp(backend, "grid") || !strcmp(backend, "hashgrid"))
        return "cell_size";
    if (!strcmp(backend, "tower"))
        return "tower_size";
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Worlds and events                                                         */

void tu_recorder_init(tu_recorder *rec)
{
    memset(rec, 0, sizeof *rec);
}

void tu_recorder_clear(tu_recorder *rec)
{
    rec->count = 0;
}

void tu_recorder_free(tu_recorder *rec)
{
    free(rec->events);
    tu_recorder_init(rec);
}

void tu_recorder_push(tu_recorder *rec, const percept_event *event)
{
    if (rec->count == rec->capacity) {
        size_t cap = rec->capacity ? rec->capacity * 2 : 64;
        percept_event *grown = realloc(rec->events, cap * sizeof *grown);
        if (grown == NULL) {
            /* The callback cannot fail, and a lost event would make a comparison lie. */
            fprintf(stderr, "testutil: out of memory recording events\n");
            abort();
        }
        rec->events = grown;
        rec->capacity = cap;
    }
    rec->events[rec->count++] = *event;
}

void tu_record(void *user, const percept_event *event)
{
    tu_recorder_push((tu_recorder *)user, event);
}

percept_world *tu_open(const char *backend, const char *extra_ini, tu_recorder *rec)
{
    return tu_open_faulty(backend, extra_ini, rec, NULL);
}

percept_world *tu_open_faulty(const char *backend, const char *extra_ini, tu_recorder *rec,
                              tu_fault_alloc *fa)
{
    return tu_open_with(backend, extra_ini, rec, fa, 0);
}

percept_world *tu_open_with(const char *backend, const char *extra_ini, tu_recorder *rec,
                            tu_fault_alloc *fa, size_t threads)
{
    char ini[4096];
    percept_world *world = NULL;
    percept_error error;
    percept_allocator allocator = {tu_fault_fn, fa};
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.allocator = fa ? &allocator : NULL;
    options.threads = threads;
    snprintf(ini, sizeof ini, "[percept]\nbackend = %s\n%s", backend,
             extra_ini != NULL ? extra_ini : "");
    int rc = percept_world_open_string(&world, ini, "<test>", &options, &error);
    if (rc != PERCEPT_OK || world == NULL)
        fail_msg("cannot open a world with backend '%s': %s: %s\nconfig:\n%s", backend,
                 percept_status_name(rc), error.text, ini);
    if (rec != NULL)
        assert_int_equal(percept_set_event_callback(world, tu_record, rec), PERCEPT_OK);
    return world;
}

percept_id tu_spread_id(uint32_t i)
{
    if (i == 0)
        return 0;
    if (i == 1)
        return UINT32_MAX;
    uint32_t x = i * 2654435761u;
    x ^= x >> 15;
    /* The bijection could land on 0 or UINT32_MAX: keep those for i 0 and 1. */
    return x == 0 || x == UINT32_MAX ? 0x7FFFFFFFu - i : x;
}

double tu_random_range(uint64_t *r)
{
    static const double common[] = {1, 2, 2.5, 5, 5, 10, 10, 13, 15, 20, 25, 26, 40, 65};
    uint32_t k = splitmix_below(r, 100);
    if (k < 20)
        return 0;
    if (k < 80)
        return common[splitmix_below(r, COUNT_OF(common))];
    return k < 97 ? splitmix_unit(r) * 50 : 1e7;
}

percept_entity_desc tu_desc(double x, double y, double sight, double hearing, double smell,
                            unsigned hidden)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    d.x = x;
    d.y = y;
    d.sense[PERCEPT_SIGHT].range = sight;
    d.sense[PERCEPT_HEARING].range = hearing;
    d.sense[PERCEPT_SMELL].range = smell;
    d.hidden = hidden;
    return d;
}

void tu_model_init(model *m, int move_events, const percept_world *w)
{
    const char *names[PERCEPT_MAX_SENSES];
    int count = percept_sense_count(w);
    if (count < 1 || count > PERCEPT_MAX_SENSES)
        fail_msg("the world has %d senses", count);
    for (int s = 0; s < count; s++) {
        names[s] = percept_sense_name(w, s);
        if (names[s] == NULL)
            fail_msg("sense %d of %d has no name", s, count);
    }
    model_init(m, move_events);
    model_set_senses(m, count, names);
}

void tu_add(percept_world *world, percept_id id, percept_entity_desc desc)
{
    int rc = percept_add(world, id, &desc);
    if (rc != PERCEPT_OK)
        fail_msg("percept_add(%u, (%.17g, %.17g)) returned %d: %s", (unsigned)id, desc.x, desc.y,
                 rc, percept_errmsg(world));
}

percept_event tu_ev3(percept_event_kind kind, percept_id observer, percept_id target,
                     percept_sense sense, double x, double y, double z)
{
    percept_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.sense = sense;
    e.observer = observer;
    e.target = target;
    e.x = x;
    e.y = y;
    e.z = z;
    e.has_source = 1; /* percept.h: 1 for every event but a stimulus */
    return e;
}

percept_event tu_ev(percept_event_kind kind, percept_id observer, percept_id target,
                    percept_sense sense, double x, double y)
{
    return tu_ev3(kind, observer, target, sense, x, y, 0);
}

percept_event tu_stim_ev(percept_id observer, percept_sense sense, long long source, double x,
                         double y, double z)
{
    percept_event e =
        tu_ev3(PERCEPT_STIMULUS, observer, source >= 0 ? (percept_id)source : 0, sense, x, y, z);
    e.has_source = source >= 0;
    return e;
}

void tu_print_events(const char *title, const percept_event *events, size_t count)
{
    print_error("  %s (%zu):\n", title, count);
    for (size_t i = 0; i < count && i < 64; i++) {
        char text[160];
        model_describe_event(NULL, text, sizeof text, &events[i]);
        print_error("    [%zu] %s\n", i, text);
    }
}

int tu_events_match(const tu_recorder *rec, const percept_event *expected, size_t count,
                    const char *what)
{
    char why[512];
    if (model_same_events(NULL, expected, count, rec->events, rec->count, why, sizeof why))
        return 1;
    print_error("%s: %s\n", what, why);
    tu_print_events("expected", expected, count);
    tu_print_events("delivered", rec->events, rec->count);
    return 0;
}

int tu_list_matches(const percept_world *world, percept_id id, percept_sense sense, int by_target,
                    const percept_id *expected, size_t count)
{
    percept_id got[256];
    size_t n = 0;
    int rc = by_target ? percept_perceived_by(world, id, sense, got, 256, &n)
                       : percept_perceived(world, id, sense, got, 256, &n);
    int ok = rc == PERCEPT_OK && n == count;
    for (size_t i = 0; ok && i < n; i++)
        ok = got[i] == expected[i];
    if (!ok) {
        print_error("%s of %u by sense %d: status %d; expected",
                    by_target ? "perceived_by" : "perceived", (unsigned)id, (int)sense, rc);
        for (size_t i = 0; i < count; i++)
            print_error(" %u", (unsigned)expected[i]);
        print_error(", got");
        for (size_t i = 0; i < n && i < 256; i++)
            print_error(" %u", (unsigned)got[i]);
        print_error("\n");
    }
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Calls on a world and on the model                                         */

int tu_apply(percept_world *w, const tu_op *o)
{
    switch (o->kind) {
    case TU_ADD:
        return percept_add(w, o->id, &o->desc);
    case TU_UPDATE:
        return percept_update(w, o->id, &o->desc);
    case TU_MOVE:
        return percept_move(w, o->id, o->x, o->y);
    case TU_MOVE3:
        return percept_move3(w, o->id, o->x, o->y, o->z);
    case TU_TURN:
        return percept_turn(w, o->id, o->x, o->y, o->z);
    case TU_REMOVE:
        return percept_remove(w, o->id);
    case TU_RANGE:
        return percept_set_range(w, o->id, o->sense, o->value);
    case TU_HIDE:
        return percept_set_hidden(w, o->id, o->sense, o->value != 0);
    case TU_EMIT:
        return percept_emit(w, &o->stimulus);
    case TU_TICK:
        return percept_tick(w, o->changes, o->count);
    }
    return PERCEPT_EINVAL;
}

int tu_apply_model(model *m, const tu_op *o)
{
    switch (o->kind) {
    case TU_ADD:
        return model_add(m, o->id, &o->desc);
    case TU_UPDATE:
        return model_update(m, o->id, &o->desc);
    case TU_MOVE:
        return model_move(m, o->id, o->x, o->y);
    case TU_MOVE3:
        return model_move3(m, o->id, o->x, o->y, o->z);
    case TU_TURN:
        return model_turn(m, o->id, o->x, o->y, o->z);
    case TU_REMOVE:
        return model_remove(m, o->id);
    case TU_RANGE:
        return model_set_range(m, o->id, o->sense, o->value);
    case TU_HIDE:
        return model_set_hidden(m, o->id, o->sense, o->value != 0);
    case TU_EMIT:
        return model_emit(m, &o->stimulus);
    case TU_TICK:
        return model_tick(m, o->changes, o->count);
    }
    return PERCEPT_EINVAL;
}

/* An entity's fields in the trace format's words (senses as in `m`). */
static void describe_desc(const model *m, char *buf, size_t size, const percept_entity_desc *d)
{
    size_t n = (size_t)snprintf(buf, size, "%.17g %.17g %.17g", d->x, d->y, d->z);
    for (int s = 0; s < PERCEPT_MAX_SENSES && n < size; s++) {
        const percept_sense_params *p = &d->sense[s];
        const char *name = model_sense_name(m, s);
        if (p->range != 0 || signbit(p->range))
            n += (size_t)snprintf(buf + n, size - n, " %s=%.17g", name, p->range);
        if (n < size && (p->margin != 0 || signbit(p->margin)))
            n += (size_t)snprintf(buf + n, size - n, " %s.margin=%.17g", name, p->margin);
        if (n < size && p->fov != 0)
            n += (size_t)snprintf(buf + n, size - n, " %s.fov=%.17g", name, p->fov);
        if (n < size && p->ignore != 0)
            n += (size_t)snprintf(buf + n, size - n, " %s.ignore=0x%x", name, (unsigned)p->ignore);
    }
    if (n < size && (d->facing[0] != 0 || d->facing[1] != 0 || d->facing[2] != 0))
        n += (size_t)snprintf(buf + n, size - n, " facing=%.17g,%.17g,%.17g", d->facing[0],
                              d->facing[1], d->facing[2]);
    if (n < size && d->tags != 0)
        n += (size_t)snprintf(buf + n, size - n, " tags=0x%x", (unsigned)d->tags);
    if (n < size && d->hidden != 0)
        n += (size_t)snprintf(buf + n, size - n, " hidden=0x%x", d->hidden);
    if (n < size && d->size != sizeof *d)
        snprintf(buf + n, size - n, " (size %zu)", d->size);
}

/* A tick as the trace format's block; its first entries only, if it is long. */
static void describe_tick(const model *m, char *buf, size_t size, const percept_change *changes,
                          size_t count)
{
    size_t n = (size_t)snprintf(buf, size, "tick of %zu", count);
    for (size_t i = 0; i < count && changes != NULL && n < size; i++) {
        const percept_change *c = &changes[i];
        char desc[1024];
        if (c->kind == PERCEPT_CHANGE_MOVE || c->kind == PERCEPT_CHANGE_TURN)
            n += (size_t)snprintf(buf + n, size - n, "; %s %u %.17g %.17g %.17g",
                                  c->kind == PERCEPT_CHANGE_MOVE ? "move" : "face", (unsigned)c->id,
                                  c->x, c->y, c->z);
        else if (c->kind == PERCEPT_CHANGE_UPDATE && c->desc != NULL) {
            describe_desc(m, desc, sizeof desc, c->desc);
            n += (size_t)snprintf(buf + n, size - n, "; update %u %s", (unsigned)c->id, desc);
        } else
            n += (size_t)snprintf(buf + n, size - n, "; kind %d %u", (int)c->kind, (unsigned)c->id);
    }
}

void tu_describe(const model *m, char *buf, size_t size, const tu_op *o)
{
    const char *sense = model_sense_name(m, o->sense);
    const percept_stimulus *st = &o->stimulus;
    char desc[1024];
    switch (o->kind) {
    case TU_ADD:
    case TU_UPDATE:
        describe_desc(m, desc, sizeof desc, &o->desc);
        snprintf(buf, size, "%s %u %s", o->kind == TU_ADD ? "add" : "update", (unsigned)o->id,
                 desc);
        break;
    case TU_MOVE:
        snprintf(buf, size, "move %u %.17g %.17g", (unsigned)o->id, o->x, o->y);
        break;
    case TU_MOVE3:
        snprintf(buf, size, "move %u %.17g %.17g %.17g", (unsigned)o->id, o->x, o->y, o->z);
        break;
    case TU_TURN:
        snprintf(buf, size, "face %u %.17g %.17g %.17g", (unsigned)o->id, o->x, o->y, o->z);
        break;
    case TU_REMOVE:
        snprintf(buf, size, "remove %u", (unsigned)o->id);
        break;
    case TU_RANGE:
        snprintf(buf, size, "range %u %s %.17g", (unsigned)o->id, sense, o->value);
        break;
    case TU_HIDE:
        snprintf(buf, size, "%s %u %s", o->value != 0 ? "hide" : "show", (unsigned)o->id, sense);
        break;
    case TU_EMIT:
        snprintf(buf, size, "emit %s(%d) %.17g %.17g %.17g strength=%.17g source=%s%u tags=0x%x",
                 model_sense_name(m, st->sense), (int)st->sense, st->x, st->y, st->z, st->strength,
                 st->has_source ? "" : "none:", (unsigned)st->source, (unsigned)st->tags);
        break;
    case TU_TICK:
        describe_tick(m, buf, size, o->changes, o->count);
        break;
    }
}

int tu_call(percept_world *w, tu_recorder *rec, model *m, const tu_op *o, const char *what)
{
    tu_recorder_clear(rec);
    int got = tu_apply(w, o), want = tu_apply_model(m, o);
    char call[1200], why[512];
    if (got == want &&
        model_same_events(m, m->events, m->n_events, rec->events, rec->count, why, sizeof why))
        return got;
    tu_describe(m, call, sizeof call, o);
    if (got != want)
        fail_msg("%s: %s returned %s, the model says %s: %s", what, call, percept_status_name(got),
                 percept_status_name(want), percept_errmsg(w));
    tu_print_events("the model's", m->events, m->n_events);
    tu_print_events("delivered", rec->events, rec->count);
    fail_msg("%s: %s: %s", what, call, why);
    return got;
}

void tu_expect_world(const model *m, const percept_world *w, const char *what)
{
    char why[512];
    if (!model_check_world(m, w, why, sizeof why))
        fail_msg("%s: the world differs from the model: %s", what, why);
}

void tu_expect_query(const model *m, const percept_world *w, double x, double y, double z,
                     double radius, const char *what)
{
    size_t room = m->count + 1, n_want = 0, n_got = 12345;
    percept_id *want = calloc(room, sizeof *want), *got = calloc(room, sizeof *got);
    assert_true(want != NULL && got != NULL);
    int status = model_query(m, x, y, z, radius, want, &n_want);
    int rc = percept_query(w, x, y, z, radius, got, room, &n_got);
    int ok = rc == status &&
             (rc != PERCEPT_OK || (n_got == n_want && memcmp(got, want, n_got * sizeof *got) == 0));
    if (!ok) {
        size_t k = 0;
        while (k < n_got && k < n_want && got[k] == want[k])
            k++;
        print_error("%s: percept_query(%.17g, %.17g, %.17g, radius %.17g): %s, %zu IDs; the model "
                    "says %s, %zu IDs; they part at index %zu (%ld vs %ld)\n",
                    what, x, y, z, radius, percept_status_name(rc), n_got,
                    percept_status_name(status), n_want, k, k < n_got ? (long)got[k] : -1L,
                    k < n_want ? (long)want[k] : -1L);
    }
    free(want);
    free(got);
    if (!ok)
        fail();
}

/* ------------------------------------------------------------------------ */
/* A failing allocator                                                       */

#define BLOCK_MAGIC 0x70657263656c6c6fULL

/* Each block carries its size (to tell growth from shrinking) and a magic word. */
typedef union block_header {
    max_align_t align;
    struct {
        size_t size;
        unsigned long long magic;
    } h;
} block_header;

void *tu_fault_fn(void *user, void *ptr, size_t size)
{
    tu_fault_alloc *fa = user;
    block_header *h = ptr != NULL ? (block_header *)ptr - 1 : NULL;
    if (h != NULL && h->h.magic != BLOCK_MAGIC) {
        fa->foreign_frees++;
        return NULL;
    }
    if (size == 0) {
        if (h != NULL) {
            fa->live_blocks--;
            fa->live_bytes -= h->h.size;
            h->h.magic = 0;
            free(h);
        }
        return NULL;
    }
    size_t old = h != NULL ? h->h.size : 0;
    if (h != NULL && size < old) {
        fa->shrinks++;
        if (fa->refuse_shrinks)
            return NULL;
    }
    if (h == NULL || size > old) {
        /* Only new blocks and growth are counted, and may fail. */
        ++fa->counted;
        if (fa->fail_at != 0 &&
            (fa->counted == fa->fail_at || (fa->sticky && fa->counted > fa->fail_at))) {
            fa->hit = 1;
            return NULL;
        }
    }
    if (size > (size_t)-1 - sizeof(block_header))
        return NULL;
    block_header *n = realloc(h, sizeof *n + size);
    if (n == NULL)
        return NULL;
    if (h == NULL) {
        fa->live_blocks++;
        n->h.magic = BLOCK_MAGIC;
    }
    fa->live_bytes = fa->live_bytes - old + size;
    n->h.size = size;
    return n + 1;
}

void tu_fault_init(tu_fault_alloc *fa)
{
    memset(fa, 0, sizeof *fa);
}

void tu_expect_no_leak(const tu_fault_alloc *fa, const char *what)
{
    if (fa->live_blocks != 0 || fa->live_bytes != 0 || fa->foreign_frees != 0) {
        print_error("%s: %zu block(s), %zu byte(s) still allocated, %zu foreign free(s)\n", what,
                    fa->live_blocks, fa->live_bytes, fa->foreign_frees);
        fail();
    }
}
