/*
 * test_bad_input.c - bad arguments to every call (test_callback.c, test_config.c
 * and test_plugin_load.c cover the rest): each is refused with its status and a
 * message, delivers no event and leaves the world exactly as the model (model.h)
 * still has it.
 */
#include "testutil.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL
#define BIG UINT32_MAX

/* ------------------------------------------------------------------------ */
/* A populated world and the check that a refused call changed nothing       */

typedef struct fixture {
    percept_world *w;
    tu_recorder rec;
    model m;
} fixture;

/*
 * 1, 2 and 3 perceive each other by some senses; 4 is hidden from sight; 5
 * was added and removed again, so its ID is free and its slot is reusable.
 */
static void fixture_open(fixture *f, const char *backend)
{
    const percept_entity_desc d[] = {tu_desc(10, 10, 5, 5, 5, 0), tu_desc(13, 14, 3, 0, 5, 1u << H),
                                     tu_desc(10, 10, 0, 0, 0, 0), tu_desc(11, 11, 8, 1, 0, 1u << S),
                                     tu_desc(12, 10, 9, 9, 9, 0)};
    tu_recorder_init(&f->rec);
    model_init(&f->m, 1);
    f->w = tu_open(backend, "move_events = on\n", &f->rec);
    for (percept_id i = 0; i < COUNT_OF(d); i++) {
        tu_op o = {.kind = TU_ADD, .id = i + 1, .desc = d[i]};
        tu_call(f->w, &f->rec, &f->m, &o, "the fixture");
    }
    tu_op remove = {.kind = TU_REMOVE, .id = 5};
    tu_call(f->w, &f->rec, &f->m, &remove, "the fixture");
    tu_recorder_clear(&f->rec);
}

static void fixture_close(fixture *f)
{
    percept_world_close(f->w);
    tu_recorder_free(&f->rec);
    model_free(&f->m);
}

/* The call returned `want`, with a message if it was a change (`change`);
 * no event came; the world is as the model has it. */
static void expect_refused(fixture *f, int rc, int want, int change, const char *what)
{
    if (rc != want)
        fail_msg("%s: returned %s, expected %s", what, percept_status_name(rc),
                 percept_status_name(want));
    if (change && percept_errmsg(f->w)[0] == '\0')
        fail_msg("%s: no message", what);
    tu_expect_no_events(&f->rec, what);
    tu_expect_world(&f->m, f->w, what);
}

#define REFUSED(f, call, want) expect_refused((f), (call), (want), 1, #call)
#define REFUSED_READ(f, call, want) expect_refused((f), (call), (want), 0, #call)

/* ------------------------------------------------------------------------ */
/* Numbers, masks and senses                                                 */

static void check_number_edges(const char *backend)
{
    const double beyond = nextafter(PERCEPT_COORD_LIMIT, INFINITY);
    const double tiny_negative = -nextafter(0.0, 1.0);
    const double bad_coords[] = {beyond, -beyond, DBL_MAX,  -DBL_MAX,
                                 NAN,    -NAN,    INFINITY, -INFINITY};
    const double bad_ranges[] = {beyond, DBL_MAX, -DBL_MAX, tiny_negative, -1e-300,
                                 -1.0,   NAN,     -NAN,     INFINITY,      -INFINITY};
    fixture f;
    fixture_open(&f, backend);
    for (size_t i = 0; i < COUNT_OF(bad_coords); i++) {
        double v = bad_coords[i];
        percept_entity_desc dx = tu_desc(v, 10, 1, 1, 1, 0), dy = tu_desc(10, v, 1, 1, 1, 0);
        REFUSED(&f, percept_add(f.w, 99, &dx), PERCEPT_EINVAL);
        REFUSED(&f, percept_add(f.w, 99, &dy), PERCEPT_EINVAL);
        REFUSED(&f, percept_move(f.w, 1, v, 10), PERCEPT_EINVAL);
        REFUSED(&f, percept_move(f.w, 2, 10, v), PERCEPT_EINVAL);
        REFUSED(&f, percept_move(f.w, 3, v, v), PERCEPT_EINVAL);
        const percept_change bad[] = {TU_CH_MOVE(1, 0.5, v, 0), TU_CH_MOVE(2, 1, 1, v),
                                      TU_CH_TURN(3, 1, v, 0)};
        for (size_t k = 0; k < COUNT_OF(bad); k++)
            REFUSED(&f, percept_tick(f.w, &bad[k], 1), PERCEPT_EINVAL);
    }
    for (size_t i = 0; i < COUNT_OF(bad_ranges); i++) {
        for (int s = 0; s < 3; s++) {
            percept_entity_desc d = tu_desc(10, 10, 1, 1, 1, 0);
            d.sense[s].range = bad_ranges[i];
            REFUSED(&f, percept_add(f.w, 99, &d), PERCEPT_EINVAL);
            REFUSED(&f, percept_set_range(f.w, 1, (percept_sense)s, bad_ranges[i]), PERCEPT_EINVAL);
            /* Also for an entity whose range of that sense is 0. */
            REFUSED(&f, percept_set_range(f.w, 3, (percept_sense)s, bad_ranges[i]), PERCEPT_EINVAL);
        }
    }
    /* At the limit is accepted; -0 is a range of 0, a missing sense. */
    tu_op ops[] = {
        {.kind = TU_ADD, .id = 99, .desc = tu_desc(PERCEPT_COORD_LIMIT, 10, -0.0, 1e15, 0, 0)},
        {.kind = TU_RANGE, .id = 1, .sense = S, .value = -0.0},
        {.kind = TU_MOVE, .id = 3, .x = -PERCEPT_COORD_LIMIT, .y = PERCEPT_COORD_LIMIT},
    };
    for (size_t i = 0; i < COUNT_OF(ops); i++)
        tu_call(f.w, &f.rec, &f.m, &ops[i], "numbers at the limits");
    assert_int_equal(percept_perceives(f.w, 99, 1, H), 1); /* 1e15 reaches from the edge */
    tu_expect_world(&f.m, f.w, "numbers at the limits");
    fixture_close(&f);
}

/* Hidden masks with bits beyond the three senses; any nonzero flag hides. */
static void check_hidden_mask(const char *backend)
{
    const unsigned masks[] = {1u << 3, 1u << 3 | 1u << S, 0xF0u, UINT_MAX, 1u << 31};
    fixture f;
    fixture_open(&f, backend);
    for (size_t i = 0; i < COUNT_OF(masks); i++) {
        percept_entity_desc d = tu_desc(10, 10, 1, 1, 1, masks[i]);
        REFUSED(&f, percept_add(f.w, 99, &d), PERCEPT_EINVAL);
    }
    tu_op hide[] = {{.kind = TU_HIDE, .id = 3, .sense = M, .value = 42},
                    {.kind = TU_HIDE, .id = 3, .sense = H, .value = -1}};
    for (size_t i = 0; i < COUNT_OF(hide); i++)
        tu_call(f.w, &f.rec, &f.m, &hide[i], "a nonzero flag");
    assert_int_equal(percept_perceives(f.w, 1, 3, M), 0);
    fixture_close(&f);
}

/* Sense numbers far outside 0..2, for every call that takes one. */
static void check_sense_numbers(const char *backend)
{
    const int senses[] = {3, 4, 255, -1, -3, INT_MAX, INT_MIN};
    percept_id ids[8];
    size_t count = 12345;
    fixture f;
    fixture_open(&f, backend);
    for (size_t i = 0; i < COUNT_OF(senses); i++) {
        percept_sense s = (percept_sense)senses[i];
        REFUSED(&f, percept_set_range(f.w, 1, s, 1), PERCEPT_EINVAL);
        REFUSED(&f, percept_set_range(f.w, 1, s, 0), PERCEPT_EINVAL);
        REFUSED(&f, percept_set_hidden(f.w, 2, s, 1), PERCEPT_EINVAL);
        REFUSED(&f, percept_set_hidden(f.w, 2, s, 0), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_perceives(f.w, 1, 2, s), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_perceived(f.w, 1, s, ids, 8, &count), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_perceived_by(f.w, 1, s, ids, 8, &count), PERCEPT_EINVAL);
        assert_null(percept_backend_name(f.w, s));
        assert_null(percept_backend_path(f.w, s));
        assert_null(percept_sense_name(f.w, s));
    }
    assert_int_equal(count, 12345); /* never written on failure */
    fixture_close(&f);
}

/* ------------------------------------------------------------------------ */
/* Version 2 fields: each bad value refused, the world as it was             */

/*
 * A world of two senses, "eyes" (with a margin) and "ears", and four
 * entities with every version 2 field: 1 looks along x with a 90 degree
 * cone of eyes, 2 stands above it with tags, 3 ignores 2's tags by ears,
 * 4 has no cone and no facing. 1 perceives 2 and 3; 3 hears 1 and 4.
 */
static void fixture_open_v2(fixture *f, const char *backend)
{
    percept_entity_desc d[4];
    for (int i = 0; i < 4; i++)
        d[i] = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    d[0].x = 10;
    d[0].y = 10;
    d[0].facing[0] = 1;
    d[0].sense[0] = (percept_sense_params){20, 5, 90, 0};
    d[1].x = 14;
    d[1].y = 11;
    d[1].z = 3;
    d[1].tags = 0x30;
    d[1].sense[1].range = 4;
    d[2].x = 16;
    d[2].y = 9;
    d[2].facing[1] = -2;
    d[2].sense[1] = (percept_sense_params){10, 0, 360, 0x10};
    d[3].x = 19;
    d[3].y = 9;
    d[3].hidden = PERCEPT_SENSE_BIT(0);
    tu_recorder_init(&f->rec);
    f->w = tu_open(backend, "move_events = on\n[world]\nsenses = eyes ears\n", &f->rec);
    tu_model_init(&f->m, 1, f->w);
    for (percept_id i = 0; i < 4; i++) {
        tu_op o = TU_OP_ADD_DESC(i + 1, d[i]);
        tu_call(f->w, &f->rec, &f->m, &o, "the version 2 fixture");
    }
    assert_int_equal(percept_perceives(f->w, 1, 2, 0), 1);
    assert_int_equal(percept_perceives(f->w, 3, 4, 1), 1);
    tu_recorder_clear(&f->rec);
}

/* The description of entity `id` as the model holds it, to spoil one field of. */
static percept_entity_desc desc_of(const fixture *f, percept_id id)
{
    return model_desc(&f->m, model_get(&f->m, id));
}

/* A change refused with EINVAL and a message naming `field` (NULL: any message). */
static void expect_field_refused(fixture *f, int rc, const char *field, const char *what)
{
    expect_refused(f, rc, PERCEPT_EINVAL, 1, what);
    if (field != NULL && strstr(percept_errmsg(f->w), field) == NULL)
        fail_msg("%s: the message does not name %s: %s", what, field, percept_errmsg(f->w));
}

/* Each bad value, in a new entity and in an update of one: EINVAL, naming the field. */
static void expect_desc_refused(fixture *f, const percept_entity_desc *bad, const char *field,
                                const char *what)
{
    char text[256];
    snprintf(text, sizeof text, "percept_add with %s", what);
    expect_field_refused(f, percept_add(f->w, 99, bad), field, text);
    snprintf(text, sizeof text, "percept_update with %s", what);
    expect_field_refused(f, percept_update(f->w, 1, bad), field, text);
}

static void check_v2_numbers(const char *backend)
{
    const double beyond = nextafter(PERCEPT_COORD_LIMIT, INFINITY);
    const double not_finite[] = {NAN, -NAN, INFINITY, -INFINITY};
    const double bad_margins[] = {-1, -nextafter(0.0, 1.0), NAN, INFINITY, -INFINITY, beyond};
    const double bad_fovs[] = {
        -1, -nextafter(0.0, 1.0), nextafter(360.0, INFINITY), 720, NAN, INFINITY, -INFINITY, -360};
    fixture f;
    fixture_open_v2(&f, backend);
    for (size_t i = 0; i < COUNT_OF(not_finite); i++) {
        double v = not_finite[i];
        percept_entity_desc d = desc_of(&f, 1);
        d.z = v;
        expect_desc_refused(&f, &d, NULL, "a height not finite");
        for (int k = 0; k < 3; k++) {
            d = desc_of(&f, 1);
            d.facing[k] = v;
            expect_desc_refused(&f, &d, "facing", "a facing not finite");
        }
        REFUSED(&f, percept_move3(f.w, 2, 1, 1, v), PERCEPT_EINVAL);
        REFUSED(&f, percept_move3(f.w, 2, v, 1, 1), PERCEPT_EINVAL);
        REFUSED(&f, percept_turn(f.w, 1, v, 0, 0), PERCEPT_EINVAL);
        REFUSED(&f, percept_turn(f.w, 4, 1, 1, v), PERCEPT_EINVAL);
    }
    REFUSED(&f, percept_move3(f.w, 2, 1, 1, beyond), PERCEPT_EINVAL);
    REFUSED(&f, percept_move3(f.w, 2, 1, 1, -beyond), PERCEPT_EINVAL);
    for (size_t i = 0; i < COUNT_OF(bad_margins); i++) {
        percept_entity_desc d = desc_of(&f, 1);
        d.sense[1].margin = bad_margins[i];
        expect_desc_refused(&f, &d, "ears.margin", "a bad margin");
    }
    for (size_t i = 0; i < COUNT_OF(bad_fovs); i++) {
        percept_entity_desc d = desc_of(&f, 1);
        d.sense[0].fov = bad_fovs[i];
        expect_desc_refused(&f, &d, "eyes.fov", "a fov outside (0, 360]");
    }
    /* The edges of what is allowed: a fov of 360 or the smallest above 0,
     * margins of 0 and the limit. */
    percept_entity_desc d = desc_of(&f, 3);
    d.sense[1].fov = nextafter(0.0, 1.0);
    d.sense[1].margin = PERCEPT_COORD_LIMIT;
    tu_op fine[] = {TU_OP_UPDATE(3, d), TU_OP_UPDATE(1, desc_of(&f, 1))};
    fine[1].desc.sense[0].fov = 360;
    fine[1].desc.sense[1].margin = -0.0;
    for (size_t i = 0; i < COUNT_OF(fine); i++)
        tu_call(f.w, &f.rec, &f.m, &fine[i], "values at the edges");
    fixture_close(&f);
}

/* A sense with a cone (fov < 360, even without range) must have a facing. */
static void check_cone_without_facing(const char *backend)
{
    fixture f;
    fixture_open_v2(&f, backend);
    percept_entity_desc d = desc_of(&f, 4);
    d.sense[1].fov = 270;
    expect_desc_refused(&f, &d, NULL, "a cone without a facing");
    d = desc_of(&f, 4);
    d.sense[0].fov = 90; /* 4 has no eyes, but a cone is a cone */
    expect_desc_refused(&f, &d, NULL, "a cone of a sense without range, without a facing");
    d = desc_of(&f, 1);
    d.facing[0] = 0;
    expect_desc_refused(&f, &d, NULL, "a facing taken from a cone");
    REFUSED(&f, percept_turn(f.w, 1, 0, 0, 0), PERCEPT_EINVAL);
    REFUSED(&f, percept_turn(f.w, 1, -0.0, 0, -0.0), PERCEPT_EINVAL);
    /* Without a cone a zero facing is fine, and any length is a facing. */
    tu_op fine[] = {TU_OP_TURN(4, 0, 0, 0), TU_OP_TURN(2, 0, 0, 0), TU_OP_TURN(1, 1e-300, 0, 0)};
    for (size_t i = 0; i < COUNT_OF(fine); i++)
        tu_call(f.w, &f.rec, &f.m, &fine[i], "facings without a cone, or tiny");
    fixture_close(&f);
}

/* Hidden bits and fields of senses the world (of two) does not have. */
static void check_senses_beyond(const char *backend)
{
    const int senses[] = {2, 3, 7, -1, INT_MAX};
    fixture f;
    fixture_open_v2(&f, backend);
    for (int s = 2; s < PERCEPT_MAX_SENSES; s++) {
        percept_entity_desc d = desc_of(&f, 4);
        d.hidden |= PERCEPT_SENSE_BIT(s);
        expect_desc_refused(&f, &d, NULL, "a hidden bit of a sense the world lacks");
        for (int field = 0; field < 4; field++) {
            d = desc_of(&f, 1);
            if (field == 0)
                d.sense[s].range = 1;
            else if (field == 1)
                d.sense[s].margin = 1;
            else if (field == 2)
                d.sense[s].fov = 90;
            else
                d.sense[s].ignore = 1;
            expect_desc_refused(&f, &d, NULL, "a field of a sense the world lacks");
        }
    }
    for (size_t i = 0; i < COUNT_OF(senses); i++) {
        percept_sense s = senses[i];
        size_t count = 12345;
        percept_id ids[4];
        percept_stimulus st = PERCEPT_STIMULUS_INIT;
        st.sense = s;
        REFUSED(&f, percept_set_range(f.w, 1, s, 1), PERCEPT_EINVAL);
        REFUSED(&f, percept_set_hidden(f.w, 2, s, 1), PERCEPT_EINVAL);
        REFUSED(&f, percept_emit(f.w, &st), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_perceives(f.w, 1, 2, s), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_perceived(f.w, 1, s, ids, 4, &count), PERCEPT_EINVAL);
        assert_int_equal(count, 12345);
        assert_null(percept_sense_name(f.w, s));
        assert_null(percept_backend_name(f.w, s));
    }
    assert_int_equal(percept_sense_count(f.w), 2);
    fixture_close(&f);
}

/* Names the world does not have, by percept_sense_index(). */
static void check_sense_index(const char *backend)
{
    const char *const unknown[] = {"sight", "Eyes", "eyes ", "", "ear", "earsx", "smell"};
    fixture f;
    fixture_open_v2(&f, backend);
    assert_int_equal(percept_sense_index(f.w, "eyes"), 0);
    assert_int_equal(percept_sense_index(f.w, "ears"), 1);
    for (size_t i = 0; i < COUNT_OF(unknown); i++)
        REFUSED_READ(&f, percept_sense_index(f.w, unknown[i]), PERCEPT_ENOENT);
    REFUSED_READ(&f, percept_sense_index(f.w, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_sense_index(NULL, "eyes"), PERCEPT_EINVAL);
    fixture_close(&f);
}

/* The size of a description or a stimulus: what this library cannot read is refused. */
static void check_struct_sizes(const char *backend)
{
    const size_t bad_sizes[] = {0, 1, sizeof(percept_entity_desc) - 1,
                                sizeof(percept_entity_desc) / 2, SIZE_MAX / 2};
    fixture f;
    fixture_open_v2(&f, backend);
    for (size_t i = 0; i < COUNT_OF(bad_sizes); i++) {
        percept_entity_desc d = desc_of(&f, 2);
        d.size = bad_sizes[i];
        expect_desc_refused(&f, &d, NULL, "a bad size");
        if (bad_sizes[i] > sizeof d)
            continue; /* room for more than this library writes: see below */
        percept_entity_desc out = PERCEPT_ENTITY_DESC_INIT;
        out.size = bad_sizes[i];
        out.x = 777;
        REFUSED_READ(&f, percept_get_entity(f.w, 2, &out), PERCEPT_EINVAL);
        assert_true(out.x == 777); /* nothing written */
    }
    const size_t bad_stimulus_sizes[] = {0, 1, sizeof(percept_stimulus) - 1, SIZE_MAX / 2};
    for (size_t i = 0; i < COUNT_OF(bad_stimulus_sizes); i++) {
        percept_stimulus st = PERCEPT_STIMULUS_INIT;
        st.size = bad_stimulus_sizes[i];
        REFUSED(&f, percept_emit(f.w, &st), PERCEPT_EINVAL);
    }
    /* A description from a newer header: read while what this library does
     * not know is zero, refused once a byte of it is set. */
    struct {
        percept_entity_desc known;
        unsigned char newer[16];
    } grown;
    memset(&grown, 0, sizeof grown);
    grown.known = desc_of(&f, 2);
    grown.known.size = sizeof grown;
    grown.newer[5] = 1;
    expect_desc_refused(&f, &grown.known, NULL, "a newer field set");
    grown.newer[5] = 0;
    grown.known.x = 13;
    tu_recorder_clear(&f.rec);
    int rc = percept_update(f.w, 2, &grown.known);
    grown.known.size = sizeof grown.known;
    tu_op same = TU_OP_UPDATE(2, grown.known); /* what the model can read */
    assert_int_equal(rc, tu_apply_model(&f.m, &same));
    tu_expect_events(&f.rec, f.m.events, f.m.n_events, "an update from a newer header");
    tu_expect_world(&f.m, f.w, "an update from a newer header");
    tu_recorder_clear(&f.rec);
    REFUSED(&f, percept_add(f.w, 99, NULL), PERCEPT_EINVAL);
    REFUSED(&f, percept_update(f.w, 1, NULL), PERCEPT_EINVAL);
    REFUSED(&f, percept_emit(f.w, NULL), PERCEPT_EINVAL);
    fixture_close(&f);
}

/* Stimuli: a bad point, strength or sense is EINVAL, a source not in the world ENOENT. */
static void check_bad_stimuli(const char *backend)
{
    const double bad_strengths[] = {-1, -nextafter(0.0, 1.0), NAN, INFINITY, -INFINITY};
    const double bad_coords[] = {NAN, INFINITY, nextafter(PERCEPT_COORD_LIMIT, INFINITY)};
    fixture f;
    fixture_open_v2(&f, backend);
    percept_stimulus ok = PERCEPT_STIMULUS_INIT;
    ok.sense = 1;
    ok.x = 15;
    ok.y = 10;
    for (size_t i = 0; i < COUNT_OF(bad_strengths); i++) {
        percept_stimulus st = ok;
        st.strength = bad_strengths[i];
        REFUSED(&f, percept_emit(f.w, &st), PERCEPT_EINVAL);
    }
    for (size_t i = 0; i < COUNT_OF(bad_coords); i++) {
        percept_stimulus st = ok;
        st.x = bad_coords[i];
        REFUSED(&f, percept_emit(f.w, &st), PERCEPT_EINVAL);
        st = ok;
        st.z = -bad_coords[i];
        REFUSED(&f, percept_emit(f.w, &st), PERCEPT_EINVAL);
    }
    const percept_id gone[] = {5, 0, UINT32_MAX};
    for (size_t i = 0; i < COUNT_OF(gone); i++) {
        percept_stimulus st = ok;
        st.has_source = 1;
        st.source = gone[i];
        REFUSED(&f, percept_emit(f.w, &st), PERCEPT_ENOENT);
    }
    assert_int_equal(percept_emit(NULL, &ok), PERCEPT_EINVAL);
    /* The same stimulus, valid, is heard: the refusals were for their faults. */
    tu_op emit = TU_OP_EMIT(ok);
    tu_call(f.w, &f.rec, &f.m, &emit, "the stimulus without fault");
    assert_true(f.rec.count > 0);
    fixture_close(&f);
}

/* percept_query(): a point not finite or beyond the limit, a bad radius, NULL. */
static void check_bad_queries(const char *backend)
{
    const double bad[] = {NAN, INFINITY, -INFINITY, nextafter(PERCEPT_COORD_LIMIT, INFINITY)};
    percept_id ids[8] = {77};
    size_t count = 12345;
    fixture f;
    fixture_open_v2(&f, backend);
    for (size_t i = 0; i < COUNT_OF(bad); i++) {
        REFUSED_READ(&f, percept_query(f.w, bad[i], 0, 0, 5, ids, 8, &count), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_query(f.w, 0, -bad[i], 0, 5, ids, 8, &count), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_query(f.w, 0, 0, bad[i], 5, ids, 8, &count), PERCEPT_EINVAL);
        REFUSED_READ(&f, percept_query(f.w, 0, 0, 0, bad[i], ids, 8, &count), PERCEPT_EINVAL);
    }
    REFUSED_READ(&f, percept_query(f.w, 0, 0, 0, -1, ids, 8, &count), PERCEPT_EINVAL);
    REFUSED_READ(&f, percept_query(f.w, 0, 0, 0, 5, ids, 8, NULL), PERCEPT_EINVAL);
    REFUSED_READ(&f, percept_query(f.w, 0, 0, 0, 5, NULL, 8, &count), PERCEPT_EINVAL);
    assert_int_equal(percept_query(NULL, 0, 0, 0, 5, ids, 8, &count), PERCEPT_EINVAL);
    assert_int_equal(count, 12345);
    assert_int_equal(ids[0], 77);
    tu_expect_query(&f.m, f.w, 10, 10, 0, 5, "a query without fault");
    fixture_close(&f);
}

/* ------------------------------------------------------------------------ */
/* IDs                                                                       */

/* 0, 1 and 4294967295 are ordinary IDs: unknown until added, to every call, in
 * an empty world and beside an entity; so is a removed one (5). */
static void check_unknown_ids(const char *backend)
{
    const percept_id unknown[] = {0, 1, BIG, 5};
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    percept_id ids[4];
    size_t count;
    fixture f;
    tu_recorder_init(&f.rec);
    model_init(&f.m, 1);
    f.w = tu_open(backend, NULL, &f.rec);
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < COUNT_OF(unknown); i++) {
            percept_id id = unknown[i];
            REFUSED(&f, percept_move(f.w, id, 1, 1), PERCEPT_ENOENT);
            REFUSED(&f, percept_remove(f.w, id), PERCEPT_ENOENT);
            REFUSED(&f, percept_set_range(f.w, id, S, 1), PERCEPT_ENOENT);
            REFUSED(&f, percept_set_hidden(f.w, id, S, 1), PERCEPT_ENOENT);
            REFUSED_READ(&f, percept_perceives(f.w, id, 7, S), PERCEPT_ENOENT);
            REFUSED_READ(&f, percept_perceives(f.w, 7, id, S), PERCEPT_ENOENT);
            REFUSED_READ(&f, percept_perceived(f.w, id, S, ids, 4, &count), PERCEPT_ENOENT);
            REFUSED_READ(&f, percept_perceived_by(f.w, id, S, ids, 4, &count), PERCEPT_ENOENT);
            REFUSED_READ(&f, percept_get_entity(f.w, id, &d), PERCEPT_ENOENT);
            assert_int_equal(percept_contains(f.w, id), 0);
        }
        /* Second round: beside entity 7, with 5 added and removed. */
        tu_op ops[] = {{.kind = TU_ADD, .id = 7, .desc = tu_desc(1, 1, 5, 5, 5, 0)},
                       {.kind = TU_ADD, .id = 5, .desc = tu_desc(2, 1, 5, 5, 5, 0)},
                       {.kind = TU_REMOVE, .id = 5}};
        for (size_t i = 0; round == 0 && i < COUNT_OF(ops); i++)
            tu_call(f.w, &f.rec, &f.m, &ops[i], "entities beside the unknown IDs");
        tu_recorder_clear(&f.rec);
    }
    fixture_close(&f);
}

/* An ID reused after removal, over and over: each time it comes back new,
 * with nothing of its past, and a duplicate of it is refused. */
static void check_reused_id(const char *backend)
{
    fixture f;
    fixture_open(&f, backend);
    for (int round = 0; round < 50; round++) {
        tu_op add = {.kind = TU_ADD, .id = 5};
        add.desc = tu_desc(8 + round % 7, 9 + round % 5, round % 3 * 2.5, round % 4, 9 - round % 9,
                           (unsigned)round % 8);
        tu_op remove = {.kind = TU_REMOVE, .id = 5};
        tu_call(f.w, &f.rec, &f.m, &add, "re-adding ID 5");
        tu_recorder_clear(&f.rec);
        REFUSED(&f, percept_add(f.w, 5, &add.desc), PERCEPT_EEXIST);
        tu_call(f.w, &f.rec, &f.m, &remove, "removing ID 5");
    }
    fixture_close(&f);
}

/* ------------------------------------------------------------------------ */
/* NULL and misuse of the API's own arguments                                */

static int open_text(percept_world **out, const char *text, const percept_options *options,
                     percept_error *error)
{
    static char dummy;
    *out = (percept_world *)(void *)&dummy; /* a failed open must clear it */
    memset(error, 0x55, sizeof *error);
    return percept_world_open_string(out, text, "<bad>", options, error);
}

/* Creation refused with `status`, a message, and *out cleared. */
static void expect_open_refused(int rc, percept_world *w, const percept_error *error, int status,
                                const char *what)
{
    if (rc != status || w != NULL || error->status != status ||
        memchr(error->text, '\0', sizeof error->text) == NULL || error->text[0] == '\0')
        fail_msg("%s: status %s, world %p, message '%.*s'; expected %s", what,
                 percept_status_name(rc), (void *)w, (int)sizeof error->text, error->text,
                 percept_status_name(status));
}

static void *no_memory(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)ptr;
    (void)size;
    return NULL;
}

static void test_open_arguments(void **state)
{
    const char *ok = "[percept]\nbackend = bruteforce\n";
    percept_world *w;
    percept_error error;
    (void)state;
    w = (percept_world *)&error;
    int rc = percept_world_open(&w, NULL, NULL, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "no path");
    assert_int_equal(percept_world_open(NULL, "/nonexistent.ini", NULL, &error), PERCEPT_EINVAL);
    assert_int_equal(percept_world_open(NULL, "/nonexistent.ini", NULL, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_world_open_string(NULL, ok, "<bad>", NULL, &error), PERCEPT_EINVAL);
    rc = open_text(&w, NULL, NULL, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "no text");

    /* Options not made with PERCEPT_OPTIONS_INIT. */
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.size = 0;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "size 0");
    options.size = sizeof options - 1;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "size too small");

    /* Options from a newer header: fine while the fields this library does
     * not know are zero, refused once one is set. */
    struct {
        percept_options known;
        unsigned char newer[24];
    } grown;
    memset(&grown, 0, sizeof grown);
    grown.known = (percept_options)PERCEPT_OPTIONS_INIT;
    grown.known.size = sizeof grown;
    assert_int_equal(open_text(&w, ok, &grown.known, &error), PERCEPT_OK);
    percept_world_close(w);
    grown.known.size = SIZE_MAX / 2; /* garbage, never read past */
    rc = open_text(&w, ok, &grown.known, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "size SIZE_MAX / 2");
    grown.known.size = sizeof grown;
    grown.newer[sizeof grown.newer - 3] = 1;
    rc = open_text(&w, ok, &grown.known, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "a newer option set");

    /* An allocator without its function; one that never has memory. */
    percept_allocator no_fn = {NULL, NULL}, empty = {no_memory, NULL};
    options = (percept_options)PERCEPT_OPTIONS_INIT;
    options.allocator = &no_fn;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "an allocator without alloc");
    options.allocator = &empty;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_ENOMEM, "an allocator without memory");

    /* No error struct: still refused, still cleared. */
    w = (percept_world *)&error;
    assert_int_equal(percept_world_open(&w, "/nonexistent/percept.ini", NULL, NULL), PERCEPT_EIO);
    assert_null(w);
}

static void check_null_arguments(const char *backend)
{
    size_t count = 99;
    percept_id ids[4];
    fixture f;
    fixture_open(&f, backend);
    REFUSED(&f, percept_add(f.w, 99, NULL), PERCEPT_EINVAL);
    REFUSED_READ(&f, percept_get_entity(f.w, 1, NULL), PERCEPT_EINVAL);
    REFUSED_READ(&f, percept_perceived(f.w, 1, S, NULL, 0, NULL), PERCEPT_EINVAL);
    REFUSED_READ(&f, percept_perceived(f.w, 1, S, ids, 4, NULL), PERCEPT_EINVAL);
    REFUSED_READ(&f, percept_perceived_by(f.w, 1, S, NULL, 1, &count), PERCEPT_EINVAL);
    assert_int_equal(count, 99);
    /* A NULL list with capacity 0 is the documented way to ask for the size. */
    assert_int_equal(percept_perceived(f.w, 1, S, NULL, 0, &count), PERCEPT_OK);
    assert_int_equal(count, model_perceived(&f.m, 1, S, 0, ids));
    /* Clearing the callback is allowed; the world goes on without events. */
    assert_int_equal(percept_set_event_callback(f.w, NULL, NULL), PERCEPT_OK);
    tu_op move = {.kind = TU_MOVE, .id = 3, .x = 100, .y = 100};
    tu_apply(f.w, &move);
    tu_apply_model(&f.m, &move);
    assert_int_equal(f.rec.count, 0);
    tu_expect_world(&f.m, f.w, "a move without a callback");
    fixture_close(&f);
}

/* Calls without a world: EINVAL, or the neutral answer; no message to set. */
static void test_null_world(void **state)
{
    percept_entity_desc d = tu_desc(1, 1, 1, 1, 1, 0);
    percept_id ids[4];
    percept_memory mem;
    size_t count;
    (void)state;
    assert_int_equal(percept_add(NULL, 1, &d), PERCEPT_EINVAL);
    assert_int_equal(percept_move(NULL, 1, 0, 0), PERCEPT_EINVAL);
    assert_int_equal(percept_remove(NULL, 1), PERCEPT_EINVAL);
    assert_int_equal(percept_set_range(NULL, 1, S, 1), PERCEPT_EINVAL);
    assert_int_equal(percept_set_hidden(NULL, 1, S, 1), PERCEPT_EINVAL);
    assert_int_equal(percept_update(NULL, 1, &d), PERCEPT_EINVAL);
    assert_int_equal(percept_move3(NULL, 1, 0, 0, 0), PERCEPT_EINVAL);
    assert_int_equal(percept_turn(NULL, 1, 1, 0, 0), PERCEPT_EINVAL);
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    assert_int_equal(percept_emit(NULL, &st), PERCEPT_EINVAL);
    assert_int_equal(percept_query(NULL, 0, 0, 0, 1, ids, 4, &count), PERCEPT_EINVAL);
    assert_int_equal(percept_sense_count(NULL), 0);
    assert_int_equal(percept_sense_index(NULL, "sight"), PERCEPT_EINVAL);
    assert_null(percept_sense_name(NULL, S));
    assert_int_equal(percept_set_event_callback(NULL, tu_record, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_perceives(NULL, 1, 2, S), PERCEPT_EINVAL);
    assert_int_equal(percept_perceived(NULL, 1, S, ids, 4, &count), PERCEPT_EINVAL);
    assert_int_equal(percept_perceived_by(NULL, 1, S, ids, 4, &count), PERCEPT_EINVAL);
    assert_int_equal(percept_get_entity(NULL, 1, &d), PERCEPT_EINVAL);
    assert_int_equal(percept_memory_usage(NULL, &mem), PERCEPT_EINVAL);
    assert_int_equal(percept_contains(NULL, 1), 0);
    assert_int_equal(percept_entity_count(NULL), 0);
    assert_null(percept_backend_name(NULL, S));
    assert_null(percept_backend_path(NULL, S));
    assert_non_null(percept_errmsg(NULL));
    assert_non_null(percept_strerror(12345));
    assert_non_null(percept_strerror(INT_MIN));
    assert_non_null(percept_status_name(12345));
    percept_world_close(NULL);
}

/* ------------------------------------------------------------------------ */
/* Calls from inside the event callback not covered by test_callback.c       */

typedef struct inside {
    percept_world *self, *other;
    tu_recorder *rec;
    int set_callback_rc, other_rc;
    size_t calls;
} inside;

static void inside_callback(void *user, const percept_event *e)
{
    inside *in = user;
    tu_recorder_push(in->rec, e);
    if (in->calls++ > 0)
        return;
    /* Replacing or clearing the callback while it runs is a change: refused. */
    in->set_callback_rc = percept_set_event_callback(in->self, NULL, NULL);
    /* Another world is not in a callback: changing it is fine. */
    percept_entity_desc d = tu_desc(e->x, e->y, 1, 1, 1, 0);
    in->other_rc = percept_add(in->other, e->target, &d);
}

static void check_inside_callback(const char *backend)
{
    fixture f;
    tu_recorder other_rec;
    fixture_open(&f, backend);
    tu_recorder_init(&other_rec);
    percept_world *other = tu_open(backend, NULL, &other_rec);
    tu_add(other, 1000, tu_desc(13, 14, 10, 10, 10, 0));
    tu_recorder_clear(&other_rec);

    inside in = {f.w, other, &f.rec, 0, 0, 0};
    assert_int_equal(percept_set_event_callback(f.w, inside_callback, &in), PERCEPT_OK);
    tu_op move = {.kind = TU_MOVE, .id = 2, .x = 13, .y = 15};
    tu_call(f.w, &f.rec, &f.m, &move, "a move whose callback changes the callback");
    assert_true(in.calls > 0);
    assert_int_equal(in.set_callback_rc, PERCEPT_EBUSY);
    assert_int_equal(in.other_rc, PERCEPT_OK);
    /* The nested add delivered the other world's events to its own callback. */
    assert_true(other_rec.count > 0);
    assert_int_equal(percept_contains(other, f.rec.events[0].target), 1);
    /* The callback is still the one set: the next call's events reach it. */
    size_t before = in.calls;
    move.y = 14;
    tu_call(f.w, &f.rec, &f.m, &move, "the move back");
    assert_true(in.calls > before);
    percept_world_close(other);
    tu_recorder_free(&other_rec);
    fixture_close(&f);
}

/* ------------------------------------------------------------------------ */
/* Backend parameters                                                        */

/* A config whose only fault is line 4, a parameter of the sense's backend. */
static void expect_param_refused(const char *backend, const char *section, const char *param)
{
    char text[512], key[64];
    percept_world *w;
    percept_error error;
    snprintf(text, sizeof text, "[percept]\nbackend = %s\n[%s]\n%s\n", backend, section, param);
    snprintf(key, sizeof key, "%.*s", (int)strcspn(param, " ="), param);
    int rc = open_text(&w, text, NULL, &error);
    expect_open_refused(rc, w, &error, PERCEPT_ECONFIG, text);
    if (error.line != 4 || strcmp(error.section, section) != 0 || strcmp(error.key, key) != 0)
        fail_msg("%s: line %d, [%s] '%s' named; expected line 4, [%s] '%s': %s", text, error.line,
                 error.section, error.key, section, key, error.text);
}

/* Each backend checks its own parameters; the host names the line, section and key. */
static void check_backend_params(const char *backend)
{
    static const char *const sections[] = {"sight", "hearing", "smell"};
    static const char *const bad[] = {
        "abc", "nan", "inf", "", "1e400", "5x", "0x10", "0", "-1", "1.0000000000000002e15", "-0"};
    for (size_t i = 0; i < COUNT_OF(sections); i++)
        expect_param_refused(backend, sections[i], "no_such_key = 1");
    const char *key = tu_size_key(backend);
    if (key == NULL)
        return;
    for (size_t i = 0; i < COUNT_OF(bad); i++) {
        char param[64];
        snprintf(param, sizeof param, "%s = %s", key, bad[i]);
        expect_param_refused(backend, sections[i % 3], param);
    }
    char text[256];
    percept_world *w = NULL;
    percept_error error;
    snprintf(text, sizeof text, "[percept]\nbackend = %s\n[smell]\n%s = 17\n", backend, key);
    assert_int_equal(open_text(&w, text, NULL, &error), PERCEPT_OK);
    percept_world_close(w);
}

#define BACKEND_TEST(name, check)                                                                  \
    static void name(void **state)                                                                 \
    {                                                                                              \
        (void)state;                                                                               \
        tu_for_each_backend(check);                                                                \
    }
BACKEND_TEST(test_number_edges, check_number_edges)
BACKEND_TEST(test_hidden_mask_bits, check_hidden_mask)
BACKEND_TEST(test_sense_numbers, check_sense_numbers)
BACKEND_TEST(test_unknown_ids, check_unknown_ids)
BACKEND_TEST(test_reused_id, check_reused_id)
BACKEND_TEST(test_null_arguments, check_null_arguments)
BACKEND_TEST(test_inside_callback, check_inside_callback)
BACKEND_TEST(test_backend_params, check_backend_params)
BACKEND_TEST(test_v2_numbers, check_v2_numbers)
BACKEND_TEST(test_cone_without_facing, check_cone_without_facing)
BACKEND_TEST(test_senses_beyond, check_senses_beyond)
BACKEND_TEST(test_sense_index, check_sense_index)
BACKEND_TEST(test_struct_sizes, check_struct_sizes)
BACKEND_TEST(test_bad_stimuli, check_bad_stimuli)
BACKEND_TEST(test_bad_queries, check_bad_queries)

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_number_edges),    tu_backend_test(test_hidden_mask_bits),
        tu_backend_test(test_sense_numbers),   tu_backend_test(test_unknown_ids),
        tu_backend_test(test_reused_id),       cmocka_unit_test(test_open_arguments),
        tu_backend_test(test_null_arguments),  cmocka_unit_test(test_null_world),
        tu_backend_test(test_inside_callback), tu_backend_test(test_backend_params),
        tu_backend_test(test_v2_numbers),      tu_backend_test(test_cone_without_facing),
        tu_backend_test(test_senses_beyond),   tu_backend_test(test_sense_index),
        tu_backend_test(test_struct_sizes),    tu_backend_test(test_bad_stimuli),
        tu_backend_test(test_bad_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
