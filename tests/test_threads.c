/*
 * test_threads.c - several worlds used in parallel threads, one world per
 * thread: each must deliver exactly the events a single-threaded run of the
 * same calls delivers (compared by a hash over every event), whatever the
 * backend and whatever the other threads do, including opening and closing
 * worlds and loading plugins at the same time. The calls include ticks,
 * which worlds of 2 or 4 threads ([world] threads) split among threads of
 * their own: the events must not change. And several threads reading one
 * world at once, every read call of it, must each find what one thread
 * alone finds.
 *
 * CMocka's assertions jump out of the test with longjmp and are not thread
 * safe, so the threads only record what they found; the main thread asserts.
 */
#include "testutil.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tools/splitmix.h"

#define THREADS 4
#define SEQ_ENTITIES 300
#define SEQ_CALLS 20000

/* ------------------------------------------------------------------------ */
/* One call sequence, generated once and shared read-only by every thread      */

typedef tu_op op;

/* IDs from here on are never added: a call naming one must fail with ENOENT. */
#define UNKNOWN_ID 3000000u

static op sequence[SEQ_CALLS];

/* The ticks' entries and their updates' descriptions. */
#define SEQ_TICK_ENTRIES 40000
#define TICK_MAX 64
static percept_change tick_entries[SEQ_TICK_ENTRIES];
static percept_entity_desc tick_descs[SEQ_TICK_ENTRIES];
static size_t tick_used;

/* A description of an entity at (x, y) of the sequence: every entity faces
 * somewhere, so that a cone never lacks a facing. */
static percept_entity_desc random_desc(uint64_t *rnd, double x, double y)
{
    percept_entity_desc d =
        tu_desc(x, y, splitmix_between(rnd, 0, 50), splitmix_between(rnd, 0, 30),
                splitmix_next(rnd) % 3 ? 0 : 20, (unsigned)(splitmix_next(rnd) % 8 == 0));
    d.z = splitmix_between(rnd, -5, 5);
    d.facing[0] = 1;
    d.sense[PERCEPT_SIGHT].fov = splitmix_next(rnd) % 2 ? 120 : 0;
    d.sense[PERCEPT_HEARING].margin = splitmix_between(rnd, 0, 5);
    return d;
}

/* A tick of up to TICK_MAX distinct entities in the world: steps, turns and
 * updates. Returns its size (0 if the pool is spent). */
static size_t make_tick(uint64_t *rnd, const int *alive, double (*pos)[2], percept_change **out)
{
    size_t n = 0, want = 1 + splitmix_next(rnd) % TICK_MAX;
    uint8_t named[SEQ_ENTITIES] = {0};
    *out = &tick_entries[tick_used];
    for (size_t tries = 0; tries < 4 * want && n < want; tries++) {
        uint32_t e = (uint32_t)(splitmix_next(rnd) % SEQ_ENTITIES);
        if (!alive[e] || named[e] || tick_used == SEQ_TICK_ENTRIES)
            continue;
        named[e] = 1;
        percept_id id = e * 7919u + 3u;
        unsigned c = (unsigned)(splitmix_next(rnd) % 10);
        percept_change *ch = &tick_entries[tick_used];
        if (c < 6) {
            pos[e][0] += splitmix_between(rnd, -10, 10);
            pos[e][1] += splitmix_between(rnd, -10, 10);
            *ch = TU_CH_MOVE(id, pos[e][0], pos[e][1], splitmix_between(rnd, -5, 5));
        } else if (c < 8) {
            *ch = TU_CH_TURN(id, splitmix_between(rnd, -1, 1), splitmix_between(rnd, -1, 1), 0.5);
        } else {
            tick_descs[tick_used] = random_desc(rnd, pos[e][0], pos[e][1]);
            *ch = TU_CH_UPDATE(id, &tick_descs[tick_used]);
        }
        tick_used++;
        n++;
    }
    return n;
}

static void make_sequence(void)
{
    uint64_t rnd = 7;
    int alive[SEQ_ENTITIES] = {0};
    double pos[SEQ_ENTITIES][2];
    for (size_t i = 0; i < SEQ_CALLS; i++) {
        uint32_t e = (uint32_t)(splitmix_next(&rnd) % SEQ_ENTITIES);
        op *o = &sequence[i];
        memset(o, 0, sizeof *o);
        o->id = e * 7919u + 3u;
        unsigned c = (unsigned)(splitmix_next(&rnd) % 100);
        if (c == 99) {
            percept_change *changes;
            size_t n = make_tick(&rnd, alive, pos, &changes);
            *o = TU_OP_TICK(changes, n);
        } else if (c < 2) {
            o->kind = TU_MOVE; /* fails: its message must be this world's own */
            o->id = UNKNOWN_ID + (uint32_t)i;
        } else if (!alive[e]) {
            o->kind = TU_ADD;
            o->desc =
                random_desc(&rnd, splitmix_between(&rnd, 0, 512), splitmix_between(&rnd, 0, 512));
            alive[e] = 1;
            pos[e][0] = o->desc.x;
            pos[e][1] = o->desc.y;
        } else if (c < 70) {
            o->kind = TU_MOVE;
            o->x = pos[e][0] = pos[e][0] + splitmix_between(&rnd, -10, 10);
            o->y = pos[e][1] = pos[e][1] + splitmix_between(&rnd, -10, 10);
        } else if (c < 76) {
            o->kind = TU_REMOVE;
            alive[e] = 0;
        } else if (c < 84) {
            o->kind = TU_RANGE;
            o->sense = (percept_sense)(splitmix_next(&rnd) % 3);
            o->value = splitmix_between(&rnd, 0, 60);
        } else if (c < 88) { /* every entity faces somewhere: a turn is never refused */
            o->kind = TU_TURN;
            o->x = splitmix_between(&rnd, -1, 1);
            o->y = splitmix_between(&rnd, -1, 1);
            o->z = 0.5;
        } else if (c < 90) {
            o->kind = TU_EMIT;
            o->stimulus = (percept_stimulus)PERCEPT_STIMULUS_INIT;
            o->stimulus.sense = (percept_sense)(splitmix_next(&rnd) % 3);
            o->stimulus.x = pos[e][0];
            o->stimulus.y = pos[e][1];
            o->stimulus.strength = splitmix_between(&rnd, 0.5, 2);
        } else {
            o->kind = TU_HIDE;
            o->sense = (percept_sense)(splitmix_next(&rnd) % 3);
            o->value = (double)(splitmix_next(&rnd) % 2);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Running the sequence on one world                                           */

typedef struct run_result {
    const char *backend;
    size_t threads; /* the world's own, for its ticks (percept_options.threads) */
    uint64_t hash;  /* FNV-1a over every event's fields */
    size_t events;
    int status;      /* PERCEPT_OK, or the first unexpected status */
    char error[700]; /* what went wrong, for the main thread to report */
} run_result;

static void hash_bytes(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= p[i];
        *h *= 0x100000001B3ULL;
    }
}

static void hash_event(void *user, const percept_event *e)
{
    run_result *r = user;
    uint32_t fields[4] = {(uint32_t)e->kind, (uint32_t)e->sense, e->observer, e->target};
    hash_bytes(&r->hash, fields, sizeof fields);
    hash_bytes(&r->hash, &e->x, sizeof e->x);
    hash_bytes(&r->hash, &e->y, sizeof e->y);
    hash_bytes(&r->hash, &e->z, sizeof e->z);
    hash_bytes(&r->hash, &e->has_source, sizeof e->has_source);
    r->events++;
}

/* Run the whole sequence on a fresh world of `backend`; never asserts. */
static void run_sequence(run_result *r)
{
    char ini[256];
    percept_world *w = NULL;
    percept_error error;
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.threads = r->threads;
    r->hash = 0xCBF29CE484222325ULL;
    r->events = 0;
    r->status = PERCEPT_OK;
    r->error[0] = '\0';
    snprintf(ini, sizeof ini, "[percept]\nbackend = %s\n[world]\nmax_x = 512\nmax_y = 512\n",
             r->backend);
    int rc = percept_world_open_string(&w, ini, "<threads>", &options, &error);
    if (rc != PERCEPT_OK) {
        r->status = rc;
        snprintf(r->error, sizeof r->error, "cannot open a world: %s", error.text);
        return;
    }
    percept_set_event_callback(w, hash_event, r);
    for (size_t i = 0; i < SEQ_CALLS && r->status == PERCEPT_OK; i++) {
        const op *o = &sequence[i];
        rc = tu_apply(w, o);
        if (o->id >= UNKNOWN_ID) {
            /* The message names this call's ID: no other thread's call leaks into it. */
            char want[16];
            snprintf(want, sizeof want, "%" PRIu32, o->id);
            const char *msg = percept_errmsg(w);
            if (rc != PERCEPT_ENOENT || strstr(msg, want) == NULL) {
                r->status = rc == PERCEPT_OK ? PERCEPT_EINVAL : rc;
                snprintf(r->error, sizeof r->error, "call %zu: status %d, message '%s'", i, rc,
                         msg);
            }
        } else if (rc != PERCEPT_OK) {
            r->status = rc;
            snprintf(r->error, sizeof r->error, "call %zu (kind %d, ID %u, %zu threads): %s", i,
                     (int)o->kind, (unsigned)o->id, r->threads, percept_errmsg(w));
        }
    }
    percept_world_close(w);
}

static void *thread_main(void *arg)
{
    run_sequence(arg);
    return NULL;
}

/* Run each result's backend in its own thread, all at once. */
static void run_parallel(run_result *results, size_t n)
{
    pthread_t threads[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, thread_main, &results[i]), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
}

static void expect_result(const run_result *got, const run_result *want, const char *what)
{
    if (got->status != PERCEPT_OK) {
        print_error("%s (%s): %s\n", what, got->backend, got->error);
        fail();
    }
    if (got->hash != want->hash || got->events != want->events) {
        print_error("%s (%s, ticks on %zu threads): %zu events, hash %016" PRIx64 "; the "
                    "single-threaded %s run: %zu events, hash %016" PRIx64 " (state shared "
                    "between worlds, such as a mutable static or global in the backend plugin, "
                    "or between a tick's threads?)\n",
                    what, got->backend, got->threads, got->events, got->hash, want->backend,
                    want->events, want->hash);
        fail();
    }
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                      */

/* THREADS threads, each its own world of the same backend, whose ticks run
 * on 2 threads of its own. */
static void check_same_backend(const char *backend)
{
    run_result single = {.backend = backend, .threads = 1}, parallel[THREADS];
    run_sequence(&single);
    expect_result(&single, &single, "the single-threaded run");
    assert_true(single.events > 0);
    for (size_t i = 0; i < THREADS; i++)
        parallel[i] = (run_result){.backend = backend, .threads = 2};
    run_parallel(parallel, THREADS);
    for (size_t i = 0; i < THREADS; i++)
        expect_result(&parallel[i], &single, "a thread");
}

static void test_parallel_worlds_same_backend(void **state)
{
    (void)state;
    tu_for_each_backend(check_same_backend);
}

/* One world at a time, its ticks on 1, 2, 4 and 16 threads: the same events. */
static void check_tick_threads(const char *backend)
{
    static const size_t counts[] = {2, 4, 16};
    run_result single = {.backend = backend, .threads = 1};
    run_sequence(&single);
    expect_result(&single, &single, "the single-threaded run");
    for (size_t i = 0; i < COUNT_OF(counts); i++) {
        run_result r = {.backend = backend, .threads = counts[i]};
        run_sequence(&r);
        expect_result(&r, &single, "a world's ticks on threads of its own");
    }
}

static void test_tick_threads(void **state)
{
    (void)state;
    tu_for_each_backend(check_tick_threads);
}

/*
 * Every backend at once, each in a thread (at least THREADS threads), every
 * other one with ticks on 2 threads: the events do not depend on the backend
 * or the threads, so all hashes equal one reference.
 */
static void test_parallel_worlds_all_backends(void **state)
{
    run_result single = {.backend = tu_backend_name(0), .threads = 1}, parallel[64];
    size_t backends = tu_backend_count();
    size_t n = backends < THREADS ? THREADS : backends;
    (void)state;
    if (n > 64)
        n = 64;
    run_sequence(&single);
    expect_result(&single, &single, "the single-threaded run");
    for (size_t i = 0; i < n; i++)
        parallel[i] = (run_result){.backend = tu_backend_name(i % backends), .threads = 1 + i % 2};
    run_parallel(parallel, n);
    for (size_t i = 0; i < n; i++)
        expect_result(&parallel[i], &single, "a thread");
}

/* Threads that only open and close worlds (good and bad configs) while others work. */
typedef struct churn {
    const char *backend;
    int rounds;
    char error[700];
} churn;

static void *churn_main(void *arg)
{
    churn *c = arg;
    char good[256];
    snprintf(good, sizeof good, "[percept]\nbackend = %s\n", c->backend);
    c->error[0] = '\0';
    for (int i = 0; i < c->rounds && c->error[0] == '\0'; i++) {
        percept_world *w = NULL;
        percept_error error;
        int rc = percept_world_open_string(&w, good, "<churn>", NULL, &error);
        if (rc != PERCEPT_OK) {
            snprintf(c->error, sizeof c->error, "open failed: %s", error.text);
            break;
        }
        percept_entity_desc d = tu_desc(1, 1, 5, 5, 5, 0);
        if (percept_add(w, 1, &d) != PERCEPT_OK || percept_add(w, 2, &d) != PERCEPT_OK ||
            percept_perceives(w, 1, 2, PERCEPT_SMELL) != 1)
            snprintf(c->error, sizeof c->error, "a fresh world does not work");
        percept_world_close(w);
        /* A failing open fills only this call's error. */
        rc = percept_world_open_string(&w, "[percept]\nbackend = nosuch_backend\n", "<churn-bad>",
                                       NULL, &error);
        if (rc != PERCEPT_EPLUGIN || w != NULL || strstr(error.text, "nosuch_backend") == NULL)
            snprintf(c->error, sizeof c->error, "bad open: status %d, message '%s'", rc,
                     error.text);
    }
    return NULL;
}

static void test_open_close_while_running(void **state)
{
    size_t backends = tu_backend_count();
    run_result single = {.backend = tu_backend_name(0)}, workers[THREADS / 2];
    churn churners[THREADS / 2];
    pthread_t threads[THREADS];
    (void)state;
    run_sequence(&single);
    expect_result(&single, &single, "the single-threaded run");
    for (size_t i = 0; i < THREADS / 2; i++) {
        workers[i] = (run_result){.backend = tu_backend_name(i % backends)};
        churners[i] = (churn){.backend = tu_backend_name((i + 1) % backends), .rounds = 40};
        assert_int_equal(pthread_create(&threads[2 * i], NULL, thread_main, &workers[i]), 0);
        assert_int_equal(pthread_create(&threads[2 * i + 1], NULL, churn_main, &churners[i]), 0);
    }
    for (size_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (size_t i = 0; i < THREADS / 2; i++) {
        expect_result(&workers[i], &single, "a thread beside open/close churn");
        if (churners[i].error[0] != '\0') {
            print_error("open/close thread (%s): %s\n", churners[i].backend, churners[i].error);
            fail();
        }
    }
}

/* ------------------------------------------------------------------------ */
/* One world, several readers                                                 */

typedef struct reader {
    const percept_world *w;
    uint64_t hash; /* FNV-1a over every answer, in the order asked */
    int status;    /* PERCEPT_OK, or the first status no read should give */
} reader;

#define READ_ROOM 4096

/* The world's IDs, ascending: written before the readers start, then only read. */
static percept_id read_ids[READ_ROOM];
static size_t read_count;

/* Every read of every entity: its description, its lists by each sense,
 * whether it perceives the next in ID order, and a query around it. */
static void *read_main(void *arg)
{
    reader *rd = arg;
    const percept_world *w = rd->w;
    percept_id *ids = malloc(READ_ROOM * sizeof *ids);
    rd->hash = 0xCBF29CE484222325ULL;
    rd->status = ids != NULL ? PERCEPT_OK : PERCEPT_ENOMEM;
    for (size_t i = 0; i < read_count && rd->status == PERCEPT_OK; i++) {
        percept_id id = read_ids[i], next = read_ids[(i + 1) % read_count];
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        size_t n = 0;
        int rc = percept_get_entity(w, id, &d);
        const double numbers[6] = {d.x, d.y, d.z, d.facing[0], d.facing[1], d.facing[2]};
        hash_bytes(&rd->hash, numbers, sizeof numbers);
        hash_bytes(&rd->hash, &d.tags, sizeof d.tags);
        hash_bytes(&rd->hash, &d.hidden, sizeof d.hidden);
        for (int s = 0; s < PERCEPT_MAX_SENSES; s++) {
            const double sense[3] = {d.sense[s].range, d.sense[s].margin, d.sense[s].fov};
            hash_bytes(&rd->hash, sense, sizeof sense);
            hash_bytes(&rd->hash, &d.sense[s].ignore, sizeof d.sense[s].ignore);
        }
        for (int s = 0; s < percept_sense_count(w) && rc == PERCEPT_OK; s++) {
            rc = percept_perceived(w, id, s, ids, READ_ROOM, &n);
            hash_bytes(&rd->hash, ids, n * sizeof *ids);
            if (rc == PERCEPT_OK)
                rc = percept_perceived_by(w, id, s, ids, READ_ROOM, &n);
            hash_bytes(&rd->hash, ids, n * sizeof *ids);
            int p = percept_perceives(w, id, next, s);
            hash_bytes(&rd->hash, &p, sizeof p);
        }
        if (rc == PERCEPT_OK)
            rc = percept_query(w, d.x, d.y, d.z, 30, ids, READ_ROOM, &n);
        hash_bytes(&rd->hash, ids, n * sizeof *ids);
        rd->status = rc;
    }
    free(ids);
    return NULL;
}

/* The sequence's first half on one world of `backend`; then THREADS threads
 * read it at once, each finding what one reader alone finds. */
static void check_concurrent_reads(const char *backend)
{
    percept_world *w = tu_open(backend, "[world]\nmax_x = 512\nmax_y = 512\n", NULL);
    for (size_t i = 0; i < SEQ_CALLS / 2; i++)
        if (sequence[i].id < UNKNOWN_ID)
            TU_OK(w, tu_apply(w, &sequence[i]));
    TU_OK(w, percept_entities(w, read_ids, READ_ROOM, &read_count));
    assert_true(read_count > 0 && read_count <= READ_ROOM);
    reader alone = {w, 0, 0}, readers[THREADS];
    pthread_t threads[THREADS];
    read_main(&alone);
    assert_int_equal(alone.status, PERCEPT_OK);
    for (size_t i = 0; i < THREADS; i++) {
        readers[i] = (reader){w, 0, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, read_main, &readers[i]), 0);
    }
    for (size_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (size_t i = 0; i < THREADS; i++) {
        assert_int_equal(readers[i].status, PERCEPT_OK);
        if (readers[i].hash != alone.hash)
            fail_msg("%s: reader %zu found otherwise than a reader alone", backend, i);
    }
    percept_world_close(w);
}

static void test_concurrent_reads(void **state)
{
    (void)state;
    tu_for_each_backend(check_concurrent_reads);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_tick_threads),
        tu_backend_test(test_parallel_worlds_same_backend),
        cmocka_unit_test(test_parallel_worlds_all_backends),
        cmocka_unit_test(test_open_close_while_running),
        tu_backend_test(test_concurrent_reads),
    };
    make_sequence();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
