/*
 * test_soak.c - long random runs (fixed seed) over many entities, on every
 * backend: each call's events are checked as they come (order, exactly once,
 * enter/leave alternating per observer, target and sense), and every K calls
 * the whole relation is recomputed here by brute force and compared with
 * every entity's perceived and perceived-by sets and with the events' sum.
 *
 * make check runs a small soak (1000 entities, 100000 calls, full check every
 * 10000). The full one (10000 entities, 1000000 calls, every 10000) runs with
 * `make soak`, i.e. PERCEPT_SOAK=full, or with arguments:
 *   test_soak [full] [entities=N] [ops=N] [every=N] [seed=N]
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../tools/splitmix.h"

#define SENSES PERCEPT_SENSE_COUNT
#define ALL_HIDDEN 7u

/* ------------------------------------------------------------------------ */
/* Settings                                                                  */

typedef struct soak_settings {
    size_t entities; /* the ID pool; about nine in ten are in the world at a time */
    size_t ops;      /* calls, the initial adds included */
    size_t every;    /* full check after this many calls, and at the end */
    uint64_t seed;
} soak_settings;

static soak_settings settings = {1000, 100000, 10000, 20240611};

static void parse_setting(const char *arg)
{
    unsigned long long v;
    if (strcmp(arg, "full") == 0) {
        settings.entities = 10000;
        settings.ops = 1000000;
        settings.every = 10000;
    } else if (sscanf(arg, "entities=%llu", &v) == 1 && v >= 2) {
        settings.entities = (size_t)v;
    } else if (sscanf(arg, "ops=%llu", &v) == 1) {
        settings.ops = (size_t)v;
    } else if (sscanf(arg, "every=%llu", &v) == 1 && v > 0) {
        settings.every = (size_t)v;
    } else if (sscanf(arg, "seed=%llu", &v) == 1) {
        settings.seed = v;
    } else {
        fprintf(stderr, "test_soak: unknown argument '%s'\n", arg);
        exit(2);
    }
}

/* ------------------------------------------------------------------------ */
/* Randomness and IDs                                                        */

static int chance(uint64_t *state, unsigned percent)
{
    return splitmix_next(state) % 100 < percent;
}

/* ------------------------------------------------------------------------ */
/* A set of 64-bit keys: linear probing, backward-shift deletion             */

typedef struct key_set {
    uint64_t *keys; /* EMPTY_KEY marks a free bucket */
    size_t mask, count;
} key_set;

#define EMPTY_KEY UINT64_MAX

static size_t key_home(const key_set *set, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xFF51AFD7ED558CCDULL;
    key ^= key >> 33;
    return (size_t)key & set->mask;
}

static void set_init(key_set *set, size_t buckets)
{
    set->keys = malloc(buckets * sizeof *set->keys);
    assert_non_null(set->keys);
    for (size_t i = 0; i < buckets; i++)
        set->keys[i] = EMPTY_KEY;
    set->mask = buckets - 1;
    set->count = 0;
}

static void set_free(key_set *set)
{
    free(set->keys);
    memset(set, 0, sizeof *set);
}

static size_t set_find(const key_set *set, uint64_t key)
{
    size_t i = key_home(set, key);
    while (set->keys[i] != EMPTY_KEY && set->keys[i] != key)
        i = (i + 1) & set->mask;
    return i;
}

static int set_contains(const key_set *set, uint64_t key)
{
    return set->keys[set_find(set, key)] == key;
}

static void set_insert(key_set *set, uint64_t key);

static void set_grow(key_set *set)
{
    key_set bigger;
    set_init(&bigger, 2 * (set->mask + 1));
    for (size_t i = 0; i <= set->mask; i++)
        if (set->keys[i] != EMPTY_KEY)
            set_insert(&bigger, set->keys[i]);
    set_free(set);
    *set = bigger;
}

/* Adds a key known to be absent. */
static void set_insert(key_set *set, uint64_t key)
{
    if (2 * (set->count + 1) > set->mask + 1)
        set_grow(set);
    set->keys[set_find(set, key)] = key;
    set->count++;
}

/* Removes a key known to be present. */
static void set_erase(key_set *set, uint64_t key)
{
    size_t hole = set_find(set, key);
    for (size_t j = (hole + 1) & set->mask; set->keys[j] != EMPTY_KEY; j = (j + 1) & set->mask) {
        size_t home = key_home(set, set->keys[j]);
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            set->keys[hole] = set->keys[j];
            hole = j;
        }
    }
    set->keys[hole] = EMPTY_KEY;
    set->count--;
}

/* ------------------------------------------------------------------------ */
/* The model: what the test believes the world holds                          */

typedef struct model_entity {
    double x, y, range[SENSES];
    unsigned hidden;
    int alive;
} model_entity;

typedef struct soak {
    const char *label;
    percept_world *w;
    tu_recorder rec;
    uint64_t rnd;
    double side;        /* the world bounds: 0 .. side in x and y */
    size_t n;           /* pool size */
    model_entity *ent;  /* [n] */
    percept_id *ids;    /* [n] */
    uint32_t *id_table; /* open addressing: pool indexes by ID, UINT32_MAX free */
    size_t id_mask;
    key_set pairs; /* (observer, target, sense) from the events */
    size_t alive;
    /* Buffers for the full check. */
    uint32_t *order;  /* alive indexes sorted by x */
    percept_id *got;  /* a list from the world */
    percept_id *want; /* the expected list */
    uint32_t *adj;    /* expected perceived lists of one sense, CSR */
    size_t *adj_start;
    size_t adj_cap;
    uint32_t *rev;
    size_t *rev_start;
    size_t rev_cap;
    /* Statistics. */
    size_t events, calls, checks, pairs_max;
} soak;

static uint64_t pair_key(uint32_t observer, uint32_t target, int sense)
{
    return (uint64_t)observer << 32 | (uint64_t)target << 2 | (uint64_t)sense;
}

static size_t id_home(const soak *k, percept_id id)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 32) & k->id_mask;
}

/* The pool index of an ID, or UINT32_MAX for an ID not in the pool. */
static uint32_t index_of(const soak *k, percept_id id)
{
    for (size_t i = id_home(k, id);; i = (i + 1) & k->id_mask) {
        if (k->id_table[i] == UINT32_MAX || k->ids[k->id_table[i]] == id)
            return k->id_table[i];
    }
}

static void index_add(soak *k, uint32_t index)
{
    size_t i = id_home(k, k->ids[index]);
    while (k->id_table[i] != UINT32_MAX)
        i = (i + 1) & k->id_mask;
    k->id_table[i] = index;
}

static void fail_call(const soak *k, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail_call(const soak *k, const char *what, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    print_error("%s: call %zu (%s): %s\n", k->label, k->calls, what, text);
    tu_print_events("events of the call", k->rec.events, k->rec.count);
    fail();
}

/* ------------------------------------------------------------------------ */
/* Checking one call's events                                                 */

static int event_before(const percept_event *a, const percept_event *b)
{
    if (a->observer != b->observer)
        return a->observer < b->observer;
    if (a->target != b->target)
        return a->target < b->target;
    return a->sense < b->sense;
}

/*
 * Check the call's events against the model (already updated to the state
 * after the call) and fold them into the pair set. `changed` is the entity the
 * call changed, `moved` whether it was a move. `last` is its position before
 * a removal.
 */
static void absorb_events(soak *k, const char *what, uint32_t changed, int moved, double last_x,
                          double last_y)
{
    size_t move_events[SENSES] = {0, 0, 0}, enters_of_changed[SENSES] = {0, 0, 0};
    for (size_t i = 0; i < k->rec.count; i++) {
        const percept_event *e = &k->rec.events[i];
        if ((unsigned)e->sense >= SENSES || (unsigned)e->kind > PERCEPT_MOVE)
            fail_call(k, what, "event %zu has sense %d, kind %d", i, (int)e->sense, (int)e->kind);
        if (i > 0 && !event_before(&k->rec.events[i - 1], e))
            fail_call(k, what, "event %zu is out of order or repeats a pair and sense", i);
        uint32_t o = index_of(k, e->observer), t = index_of(k, e->target);
        if (o == UINT32_MAX || t == UINT32_MAX || o == t)
            fail_call(k, what, "event %zu names unknown IDs or one entity twice", i);
        if (o != changed && t != changed)
            fail_call(k, what, "event %zu does not involve the changed entity", i);
        double x = k->ent[t].alive ? k->ent[t].x : last_x;
        double y = k->ent[t].alive ? k->ent[t].y : last_y;
        if (e->x != x || e->y != y)
            fail_call(k, what, "event %zu has position (%.17g, %.17g), expected (%.17g, %.17g)", i,
                      e->x, e->y, x, y);
        uint64_t key = pair_key(o, t, e->sense);
        int known = set_contains(&k->pairs, key);
        switch (e->kind) {
        case PERCEPT_ENTER:
            if (known)
                fail_call(k, what, "event %zu: enter for a pair already entered", i);
            set_insert(&k->pairs, key);
            if (t == changed)
                enters_of_changed[e->sense]++;
            break;
        case PERCEPT_LEAVE:
            if (!known)
                fail_call(k, what, "event %zu: leave for a pair never entered", i);
            set_erase(&k->pairs, key);
            break;
        case PERCEPT_MOVE:
            if (!known || !moved || t != changed)
                fail_call(k, what, "event %zu: a move event that does not belong here", i);
            move_events[e->sense]++;
            break;
        }
    }
    k->events += k->rec.count;
    if (k->pairs.count > k->pairs_max)
        k->pairs_max = k->pairs.count;
    if (!moved)
        return;
    /* A move reports MOVE to every observer that perceived the target before and still does. */
    for (int s = 0; s < SENSES; s++) {
        size_t count = 0;
        int rc = percept_perceived_by(k->w, k->ids[changed], (percept_sense)s, NULL, 0, &count);
        if (rc != PERCEPT_OK)
            fail_call(k, what, "percept_perceived_by returned %d", rc);
        if (count != enters_of_changed[s] + move_events[s])
            fail_call(k, what, "%s: %zu observers after the move, %zu enter and %zu move events",
                      percept_sense_name((percept_sense)s), count, enters_of_changed[s],
                      move_events[s]);
    }
}

/* ------------------------------------------------------------------------ */
/* The full check                                                             */

static const soak *sort_ctx;

static int by_x(const void *a, const void *b)
{
    double xa = sort_ctx->ent[*(const uint32_t *)a].x, xb = sort_ctx->ent[*(const uint32_t *)b].x;
    return xa < xb ? -1 : xa > xb;
}

static int by_id(const void *a, const void *b)
{
    percept_id x = *(const percept_id *)a, y = *(const percept_id *)b;
    return x < y ? -1 : x > y;
}

/* The relation's rule 4, in the same arithmetic the specification gives. */
static int reaches(double ox, double oy, double r, double tx, double ty)
{
    double dx = tx - ox, dy = ty - oy;
    return r > 0 && dx * dx + dy * dy <= r * r;
}

static void adj_push(soak *k, size_t *len, uint32_t v)
{
    if (*len == k->adj_cap) {
        k->adj_cap = k->adj_cap ? 2 * k->adj_cap : 4096;
        k->adj = realloc(k->adj, k->adj_cap * sizeof *k->adj);
        assert_non_null(k->adj);
    }
    k->adj[(*len)++] = v;
}

/* Expected perceived lists of sense s for every alive entity, by sweeping sorted x. */
static size_t expected_sense(soak *k, int s, size_t n_order)
{
    size_t len = 0;
    for (size_t oi = 0; oi < n_order; oi++) {
        uint32_t o = k->order[oi];
        const model_entity *me = &k->ent[o];
        double r = me->range[s];
        k->adj_start[o] = len;
        if (!(r > 0))
            continue;
        /* A window a little wider than the range: rounding may admit |dx| a hair over r. */
        double slack = 1e-9 * (r + fabs(me->x)) + 1e-9;
        double lo = me->x - r - slack, hi = me->x + r + slack;
        size_t a = 0, b = n_order;
        while (a < b) {
            size_t mid = (a + b) / 2;
            if (k->ent[k->order[mid]].x < lo)
                a = mid + 1;
            else
                b = mid;
        }
        for (size_t ti = a; ti < n_order && k->ent[k->order[ti]].x <= hi; ti++) {
            uint32_t t = k->order[ti];
            const model_entity *te = &k->ent[t];
            if (t != o && !(te->hidden & (1u << s)) && reaches(me->x, me->y, r, te->x, te->y))
                adj_push(k, &len, t);
        }
    }
    return len;
}

static void compare_list(soak *k, uint32_t who, int s, int by_target, const uint32_t *want_idx,
                         size_t want_n)
{
    size_t count = 0;
    percept_id id = k->ids[who];
    int rc = by_target ? percept_perceived_by(k->w, id, (percept_sense)s, k->got, k->n, &count)
                       : percept_perceived(k->w, id, (percept_sense)s, k->got, k->n, &count);
    if (rc != PERCEPT_OK) {
        print_error("%s: check after call %zu: %s(%u) returned %d\n", k->label, k->calls,
                    by_target ? "perceived_by" : "perceived", (unsigned)id, rc);
        fail();
    }
    for (size_t i = 0; i < want_n; i++)
        k->want[i] = k->ids[want_idx[i]];
    qsort(k->want, want_n, sizeof *k->want, by_id);
    int same = count == want_n;
    for (size_t i = 0; same && i < want_n; i++)
        same = k->got[i] == k->want[i];
    if (!same) {
        const model_entity *e = &k->ent[who];
        print_error("%s: check after call %zu: %s of %u by %s differs from the brute force\n",
                    k->label, k->calls, by_target ? "perceived_by" : "perceived", (unsigned)id,
                    percept_sense_name((percept_sense)s));
        print_error("  entity at (%.17g, %.17g) ranges %.17g %.17g %.17g hidden %u\n", e->x, e->y,
                    e->range[0], e->range[1], e->range[2], e->hidden);
        print_error("  expected %zu, got %zu; first differences:\n", want_n, count);
        for (size_t i = 0, j = 0, shown = 0; (i < want_n || j < count) && shown < 8;) {
            if (j >= count || (i < want_n && k->want[i] < k->got[j])) {
                print_error("    missing %u\n", (unsigned)k->want[i++]);
                shown++;
            } else if (i >= want_n || k->got[j] < k->want[i]) {
                print_error("    extra   %u\n", (unsigned)k->got[j++]);
                shown++;
            } else {
                i++, j++;
            }
        }
        fail();
    }
}

static void full_check(soak *k)
{
    size_t n_order = 0;
    for (uint32_t i = 0; i < k->n; i++)
        if (k->ent[i].alive)
            k->order[n_order++] = i;
    assert_int_equal(n_order, k->alive);
    if (percept_entity_count(k->w) != k->alive) {
        print_error("%s: check after call %zu: %zu entities, expected %zu\n", k->label, k->calls,
                    percept_entity_count(k->w), k->alive);
        fail();
    }
    for (uint32_t i = 0; i < k->n; i++) {
        const model_entity *e = &k->ent[i];
        percept_entity_desc d;
        if (percept_contains(k->w, k->ids[i]) != e->alive) {
            print_error("%s: check after call %zu: contains(%u) is wrong\n", k->label, k->calls,
                        (unsigned)k->ids[i]);
            fail();
        }
        if (!e->alive)
            continue;
        assert_int_equal(percept_get_entity(k->w, k->ids[i], &d), PERCEPT_OK);
        if (d.x != e->x || d.y != e->y || d.range[0] != e->range[0] || d.range[1] != e->range[1] ||
            d.range[2] != e->range[2] || d.hidden != e->hidden) {
            print_error("%s: check after call %zu: entity %u differs from the model\n", k->label,
                        k->calls, (unsigned)k->ids[i]);
            fail();
        }
    }
    sort_ctx = k;
    qsort(k->order, n_order, sizeof *k->order, by_x);

    size_t total = 0;
    for (int s = 0; s < SENSES; s++) {
        size_t len = expected_sense(k, s, n_order);
        total += len;
        /* The reverse lists, by counting. */
        if (len > k->rev_cap) {
            k->rev_cap = len;
            k->rev = realloc(k->rev, len * sizeof *k->rev);
            assert_non_null(k->rev);
        }
        memset(k->rev_start, 0, (k->n + 1) * sizeof *k->rev_start);
        for (size_t oi = 0; oi < n_order; oi++) {
            uint32_t o = k->order[oi];
            size_t end = oi + 1 < n_order ? k->adj_start[k->order[oi + 1]] : len;
            for (size_t j = k->adj_start[o]; j < end; j++)
                k->rev_start[k->adj[j] + 1]++;
        }
        for (size_t i = 0; i < k->n; i++)
            k->rev_start[i + 1] += k->rev_start[i];
        size_t *fill = calloc(k->n, sizeof *fill);
        assert_non_null(fill);
        for (size_t oi = 0; oi < n_order; oi++) {
            uint32_t o = k->order[oi];
            size_t end = oi + 1 < n_order ? k->adj_start[k->order[oi + 1]] : len;
            for (size_t j = k->adj_start[o]; j < end; j++) {
                uint32_t t = k->adj[j];
                k->rev[k->rev_start[t] + fill[t]++] = o;
                /* The events must have left exactly this pair entered. */
                if (!set_contains(&k->pairs, pair_key(o, t, s))) {
                    print_error("%s: check after call %zu: %u perceives %u by %s, but no enter "
                                "event said so\n",
                                k->label, k->calls, (unsigned)k->ids[o], (unsigned)k->ids[t],
                                percept_sense_name((percept_sense)s));
                    fail();
                }
            }
        }
        free(fill);
        for (size_t oi = 0; oi < n_order; oi++) {
            uint32_t o = k->order[oi];
            size_t end = oi + 1 < n_order ? k->adj_start[k->order[oi + 1]] : len;
            compare_list(k, o, s, 0, k->adj + k->adj_start[o], end - k->adj_start[o]);
            compare_list(k, o, s, 1, k->rev + k->rev_start[o],
                         k->rev_start[o + 1] - k->rev_start[o]);
        }
    }
    /* Every expected pair is in the event set; equal sizes make the sets equal. */
    if (k->pairs.count != total) {
        print_error("%s: check after call %zu: the events leave %zu pairs entered, the brute "
                    "force finds %zu\n",
                    k->label, k->calls, k->pairs.count, total);
        fail();
    }
    k->checks++;
}

/* ------------------------------------------------------------------------ */
/* Random calls                                                               */

static void expect_status(soak *k, int rc, int want, const char *what)
{
    if (rc != want) {
        print_error("%s: call %zu (%s) returned %d (%s), expected %s: %s\n", k->label, k->calls,
                    what, rc, percept_status_name(rc) ? percept_status_name(rc) : "?",
                    percept_status_name(want), percept_errmsg(k->w));
        fail();
    }
}

static double random_range(soak *k)
{
    unsigned c = (unsigned)(splitmix_next(&k->rnd) % 1000);
    if (c < 150)
        return 0;
    if (c < 750)
        return splitmix_between(&k->rnd, 0, 40);
    if (c < 998)
        return splitmix_between(&k->rnd, 40, 120);
    return splitmix_between(&k->rnd, 300, 1500); /* rare: far-reaching */
}

static void random_position(soak *k, double *x, double *y)
{
    unsigned c = (unsigned)(splitmix_next(&k->rnd) % 100);
    if (c < 90) {
        *x = splitmix_between(&k->rnd, 0, k->side);
        *y = splitmix_between(&k->rnd, 0, k->side);
    } else if (c < 97) { /* outside the bounds */
        *x = splitmix_between(&k->rnd, -k->side, 2 * k->side);
        *y = splitmix_between(&k->rnd, -k->side, 2 * k->side);
    } else { /* on a whole number: exact distances, boundary cases */
        *x = (double)(splitmix_next(&k->rnd) % 64);
        *y = (double)(splitmix_next(&k->rnd) % 64);
    }
}

static void do_add(soak *k, uint32_t i)
{
    model_entity *e = &k->ent[i];
    percept_entity_desc d;
    random_position(k, &d.x, &d.y);
    for (int s = 0; s < SENSES; s++)
        d.range[s] = random_range(k);
    d.hidden = chance(&k->rnd, 10) ? (unsigned)(splitmix_next(&k->rnd) % 8) : 0;
    tu_recorder_clear(&k->rec);
    expect_status(k, percept_add(k->w, k->ids[i], &d), PERCEPT_OK, "add");
    e->x = d.x;
    e->y = d.y;
    for (int s = 0; s < SENSES; s++)
        e->range[s] = d.range[s];
    e->hidden = d.hidden;
    e->alive = 1;
    k->alive++;
    absorb_events(k, "add", i, 0, 0, 0);
}

static void do_remove(soak *k, uint32_t i)
{
    model_entity *e = &k->ent[i];
    tu_recorder_clear(&k->rec);
    expect_status(k, percept_remove(k->w, k->ids[i]), PERCEPT_OK, "remove");
    e->alive = 0;
    k->alive--;
    absorb_events(k, "remove", i, 0, e->x, e->y);
}

static void do_move(soak *k, uint32_t i)
{
    model_entity *e = &k->ent[i];
    double x, y;
    unsigned c = (unsigned)(splitmix_next(&k->rnd) % 100);
    if (c < 75) { /* a step */
        x = e->x + splitmix_between(&k->rnd, -8, 8);
        y = e->y + splitmix_between(&k->rnd, -8, 8);
    } else if (c < 80) { /* staying put */
        x = e->x;
        y = e->y;
    } else {
        random_position(k, &x, &y);
    }
    tu_recorder_clear(&k->rec);
    expect_status(k, percept_move(k->w, k->ids[i], x, y), PERCEPT_OK, "move");
    if (x == e->x && y == e->y) {
        /* A move to where the entity stands changes nothing and delivers nothing. */
        if (k->rec.count != 0)
            fail_call(k, "move in place", "it delivered events");
        return;
    }
    e->x = x;
    e->y = y;
    absorb_events(k, "move", i, 1, 0, 0);
}

static void do_range(soak *k, uint32_t i)
{
    int s = (int)(splitmix_next(&k->rnd) % SENSES);
    double r = random_range(k);
    tu_recorder_clear(&k->rec);
    expect_status(k, percept_set_range(k->w, k->ids[i], (percept_sense)s, r), PERCEPT_OK,
                  "set_range");
    k->ent[i].range[s] = r;
    absorb_events(k, "set_range", i, 0, 0, 0);
}

static void do_hide(soak *k, uint32_t i)
{
    int s = (int)(splitmix_next(&k->rnd) % SENSES);
    int hidden = chance(&k->rnd, 50);
    tu_recorder_clear(&k->rec);
    expect_status(k, percept_set_hidden(k->w, k->ids[i], (percept_sense)s, hidden), PERCEPT_OK,
                  "set_hidden");
    if (hidden)
        k->ent[i].hidden |= 1u << s;
    else
        k->ent[i].hidden &= ~(1u << s);
    absorb_events(k, "set_hidden", i, 0, 0, 0);
}

/* A call that must fail and change nothing (the next full check proves the latter). */
static void do_bad(soak *k, uint32_t i)
{
    const model_entity *e = &k->ent[i];
    percept_entity_desc d = tu_desc(1, 1, 1, 1, 1, 0);
    int rc, want;
    tu_recorder_clear(&k->rec);
    if (!e->alive) {
        want = PERCEPT_ENOENT;
        rc = chance(&k->rnd, 50) ? percept_move(k->w, k->ids[i], 1, 1)
                                 : percept_remove(k->w, k->ids[i]);
    } else if (chance(&k->rnd, 50)) {
        want = PERCEPT_EEXIST;
        rc = percept_add(k->w, k->ids[i], &d);
    } else {
        want = PERCEPT_EINVAL;
        rc = percept_move(k->w, k->ids[i], e->x, NAN);
    }
    expect_status(k, rc, want, "a call that must fail");
    if (k->rec.count != 0)
        fail_call(k, "a call that must fail", "it delivered events");
}

static void one_call(soak *k)
{
    uint32_t i = (uint32_t)(splitmix_next(&k->rnd) % k->n);
    unsigned c = (unsigned)(splitmix_next(&k->rnd) % 100);
    if (c < 2) {
        do_bad(k, i);
    } else if (!k->ent[i].alive) {
        do_add(k, i);
    } else if (c < 60) {
        do_move(k, i);
    } else if (c < 66) {
        do_remove(k, i);
    } else if (c < 84) {
        do_range(k, i);
    } else {
        do_hide(k, i);
    }
    k->calls++;
}

/* ------------------------------------------------------------------------ */
/* A run                                                                      */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void soak_open(soak *k, const char *label, const char *backend, const char *sections)
{
    char ini[1024];
    memset(k, 0, sizeof *k);
    k->label = label;
    k->rnd = settings.seed;
    k->n = settings.entities;
    /* The same density whatever the population: about one entity per 1000 square units. */
    k->side = floor(1024.0 * sqrt((double)k->n / 1000.0));
    k->ent = calloc(k->n, sizeof *k->ent);
    k->ids = calloc(k->n, sizeof *k->ids);
    k->order = calloc(k->n, sizeof *k->order);
    k->got = calloc(k->n, sizeof *k->got);
    k->want = calloc(k->n, sizeof *k->want);
    k->adj_start = calloc(k->n + 1, sizeof *k->adj_start);
    k->rev_start = calloc(k->n + 1, sizeof *k->rev_start);
    assert_true(k->ent && k->ids && k->order && k->got && k->want && k->adj_start && k->rev_start);
    size_t buckets = 64;
    while (buckets < 2 * k->n)
        buckets *= 2;
    k->id_table = malloc(buckets * sizeof *k->id_table);
    assert_non_null(k->id_table);
    memset(k->id_table, 0xff, buckets * sizeof *k->id_table);
    k->id_mask = buckets - 1;
    for (uint32_t i = 0; i < k->n; i++) {
        k->ids[i] = tu_spread_id(i);
        assert_int_equal(index_of(k, k->ids[i]), UINT32_MAX);
        index_add(k, i);
    }
    set_init(&k->pairs, 1 << 16);
    tu_recorder_init(&k->rec);
    snprintf(ini, sizeof ini,
             "[percept]\nbackend = %s\nmove_events = on\n[world]\nmax_x = %.0f\nmax_y = %.0f\n%s",
             backend, k->side, k->side, sections);
    percept_error error;
    int rc = percept_world_open_string(&k->w, ini, "<soak>", NULL, &error);
    if (rc != PERCEPT_OK) {
        print_error("%s: cannot open the world: %s\n", label, error.text);
        fail();
    }
    assert_int_equal(percept_set_event_callback(k->w, tu_record, &k->rec), PERCEPT_OK);
}

static void soak_close(soak *k)
{
    percept_world_close(k->w);
    tu_recorder_free(&k->rec);
    free(k->id_table);
    set_free(&k->pairs);
    free(k->ent);
    free(k->ids);
    free(k->order);
    free(k->got);
    free(k->want);
    free(k->adj);
    free(k->adj_start);
    free(k->rev);
    free(k->rev_start);
}

/* `sections` may name other backends for some senses. */
static void soak_run(const char *label, const char *backend, const char *sections)
{
    soak k;
    double start = now_seconds();
    soak_open(&k, label, backend, sections);
    /* Nine in ten of the pool enter first, in random order of index. */
    for (uint32_t i = 0; i < k.n && k.calls < settings.ops; i++) {
        if (chance(&k.rnd, 90)) {
            do_add(&k, i);
            k.calls++;
            if (k.calls % settings.every == 0)
                full_check(&k);
        }
    }
    while (k.calls < settings.ops) {
        one_call(&k);
        if (k.calls % settings.every == 0)
            full_check(&k);
    }
    if (k.calls % settings.every != 0)
        full_check(&k);
    print_message("      %s: %zu calls on %zu IDs, %zu events, %zu full checks, at most %zu "
                  "pairs (%.2f s)\n",
                  label, k.calls, k.n, k.events, k.checks, k.pairs_max, now_seconds() - start);
    soak_close(&k);
}

static void check_backend(const char *backend)
{
    soak_run(backend, backend, "");
}

static void test_soak_each_backend(void **state)
{
    (void)state;
    tu_for_each_backend(check_backend);
}

/* Three backends at once, one per sense: the senses must not disturb each other. */
static void test_soak_mixed_backends(void **state)
{
    char ini[512], label[256];
    size_t n = tu_backend_count();
    (void)state;
    if (n < 2)
        skip();
    const char *a = tu_backend_name(0), *b = tu_backend_name(1), *c = tu_backend_name(2 % n);
    snprintf(ini, sizeof ini, "[hearing]\nbackend = %s\n[smell]\nbackend = %s\n", b, c);
    snprintf(label, sizeof label, "%s+%s+%s", a, b, c);
    soak_run(label, a, ini);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_soak_each_backend),
        cmocka_unit_test(test_soak_mixed_backends),
    };
    const char *mode = getenv("PERCEPT_SOAK");
    if (mode != NULL && strcmp(mode, "full") == 0)
        parse_setting("full");
    for (int i = 1; i < argc; i++)
        parse_setting(argv[i]);
    print_message("soak: %zu IDs, %zu calls, full check every %zu, seed %llu\n", settings.entities,
                  settings.ops, settings.every, (unsigned long long)settings.seed);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
