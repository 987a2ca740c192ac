/*
 * scene.c - the story percept-sim plays: a town with a market square and a
 * forest. Villagers and thieves wander, guards patrol looking ahead, wolves
 * roam the forest and howl, owls glide over everything, players explore, and
 * the church bell rings the hours; then market day draws the crowd into the
 * square; then the wolves charge and everyone flees, while dusk shortens
 * everyone's sight but the owls'.
 *
 * Only arithmetic and sqrt (both exactly rounded) decide positions and
 * facings, so a seed gives the same run, byte for byte, on every machine.
 */
#include "scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "../cli.h"
#include "../splitmix.h"

/* Senses differ the way a game's do: the profiles are the point of the demo.
 * Guards look ahead in a cone and overlook each other; wolves ignore their
 * own scent; owls see all round from the air. */
const sim_profile sim_profiles[KIND_COUNT] = {
    /* name, plural, colour, dot, range, margin, fov, ignore, hidden, speed, height */
    {"villager", "villagers", "#a39e93", 2.1, {35, 25, 0}, {0}, {0}, {0}, 0, 1.6, 0},
    {"guard", "guards", "#1d3557", 2.6, {80, 18, 0}, {15}, {120}, {1u << KIND_GUARD}, 0, 2, 0},
    {"wolf", "wolves", "#8d5524", 2.6, {35, 55, 120}, {0}, {0}, {0, 0, 1u << KIND_WOLF}, 0, 2.6, 0},
    {"owl", "owls", "#7b2cbf", 2.6, {180, 60, 0}, {0}, {0}, {0}, 0, 4, 40},
    {"thief", "thieves", "#111111", 2.1, {55, 45, 0}, {0}, {0}, {0}, 1u << PERCEPT_SIGHT, 2.2, 0},
    {"player", "players", "#e63946", 4.5, {220, 140, 40}, {0}, {0}, {0}, 0, 4, 0},
};

const char *const sim_op_names[OP_COUNT] = {"add",       "move",       "turn", "remove",
                                            "set_range", "set_hidden", "emit"};
const char *const sim_sense_names[SIM_SENSES] = {"sight", "hearing", "smell"};
const char *const sim_sense_colors[SIM_SENSES] = {"#f4a300", "#0096c7", "#2a9d3f"};

const char *sim_phase_text(sim_phase phase)
{
    static const char *const text[PHASE_COUNT] = {
        "wandering",
        "market day",
        "wolves! all flee",
    };
    return (unsigned)phase < PHASE_COUNT ? text[phase] : "?";
}

/* The town: a market square with houses around it, a forest to the north-west. */
#define MARKET_X 560.0
#define MARKET_Y 560.0
#define MARKET_HALF 120.0
#define TOWN_RADIUS 370.0
#define PATROL_HALF 170.0 /* guards walk a square this far from the market's centre */
#define FOREST_X 230.0
#define FOREST_Y 230.0
#define FOREST_R 150.0
#define CHURCH_X 560.0
#define CHURCH_Y 405.0

/* Sight at dusk, as a share of the day's; owls keep theirs. */
#define DUSK_SIGHT 0.6

/* Stimuli reach their strength times a hearer's range: a howl carries
 * far, the bell across the town. A wolf howls one tick in HOWL_ODDS. */
#define HOWL_STRENGTH 4.0
#define HOWL_ODDS 6
#define BELL_STRENGTH 10.0
#define BELLS 8 /* in a run: every eighth of it */

/* ------------------------------------------------------------------------ */
/* Random numbers: splitmix64, so the run depends on the seed alone          */

static unsigned below(sim_scene *s, unsigned n)
{
    return (unsigned)(splitmix_unit(&s->rng) * n);
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* A point in the disc (cx, cy, r), kept inside the world. */
static void in_disc(sim_scene *s, double cx, double cy, double r, double *x, double *y)
{
    double dx, dy;
    do {
        dx = splitmix_between(&s->rng, -1, 1);
        dy = splitmix_between(&s->rng, -1, 1);
    } while (dx * dx + dy * dy > 1);
    *x = clamp(cx + dx * r, 0, s->size);
    *y = clamp(cy + dy * r, 0, s->size);
}

static void in_market(sim_scene *s, double *x, double *y)
{
    *x = splitmix_between(&s->rng, s->market_x0, s->market_x1);
    *y = splitmix_between(&s->rng, s->market_y0, s->market_y1);
}

/* Corner k (0..3) of the guards' patrol square, clockwise from the north-west. */
static void patrol_corner(unsigned k, double *x, double *y)
{
    *x = MARKET_X + (k == 1 || k == 2 ? PATROL_HALF : -PATROL_HALF);
    *y = MARKET_Y + (k >= 2 ? PATROL_HALF : -PATROL_HALF);
}

/* ------------------------------------------------------------------------ */
/* Calls of the library, counted and timed                                   */

/* Makes call c of the library, counted, timed and passed to after_call; on
 * failure keeps the first message for the tool. */
static int call(sim_scene *s, const sim_call *c)
{
    const percept_entity_desc *d = &c->desc;
    percept_world *w = s->world;
    double start = s->timing ? cli_now_seconds() : 0.0;
    int st = c->op == OP_ADD      ? percept_add(w, c->id, d)
             : c->op == OP_MOVE   ? percept_move3(w, c->id, d->x, d->y, d->z)
             : c->op == OP_TURN   ? percept_turn(w, c->id, d->facing[0], d->facing[1], 0)
             : c->op == OP_REMOVE ? percept_remove(w, c->id)
             : c->op == OP_RANGE  ? percept_set_range(w, c->id, c->sense, c->range)
             : c->op == OP_HIDE   ? percept_set_hidden(w, c->id, c->sense, c->hidden)
                                  : percept_emit(w, &c->stimulus);
    s->op_calls[c->op]++;
    if (s->timing)
        s->op_seconds[c->op] += cli_now_seconds() - start;
    if (st < 0 && s->error[0] == '\0')
        snprintf(s->error, sizeof s->error, "%s(%u) failed: %s", sim_op_names[c->op],
                 (unsigned)c->id, percept_errmsg(w));
    if (st >= 0 && s->after_call != NULL)
        s->after_call(s->after_call_user, c);
    return st < 0 ? -1 : 0;
}

static int do_add(sim_scene *s, size_t i)
{
    sim_entity *e = &s->entities[i];
    const sim_profile *p = &sim_profiles[e->kind];
    sim_call c = {.op = OP_ADD, .id = sim_id(i), .desc = PERCEPT_ENTITY_DESC_INIT};
    percept_entity_desc *d = &c.desc;
    d->x = e->x;
    d->y = e->y;
    d->z = e->z;
    d->facing[0] = e->fx;
    d->facing[1] = e->fy;
    d->tags = 1u << e->kind;
    d->hidden = e->hidden;
    for (int k = 0; k < SIM_SENSES; k++)
        d->sense[k] = (percept_sense_params){p->range[k], p->margin[k], p->fov[k], p->ignore[k]};
    if (s->dusk && e->kind != KIND_OWL)
        d->sense[PERCEPT_SIGHT].range *= DUSK_SIGHT;
    if (call(s, &c) < 0)
        return -1;
    e->present = 1;
    return 0;
}

static int do_remove(sim_scene *s, size_t i)
{
    sim_call c = {.op = OP_REMOVE, .id = sim_id(i)};
    if (call(s, &c) < 0)
        return -1;
    s->entities[i].present = 0;
    return 0;
}

static int do_move(sim_scene *s, size_t i, double x, double y, double z)
{
    sim_entity *e = &s->entities[i];
    sim_call c = {.op = OP_MOVE, .id = sim_id(i), .desc = {.x = x, .y = y, .z = z}};
    if (call(s, &c) < 0)
        return -1;
    e->x = x;
    e->y = y;
    e->z = z;
    return 0;
}

/* Turns entity i to face (fx, fy), made one long: a zero facing keeps the old one. */
static int do_turn(sim_scene *s, size_t i, double fx, double fy)
{
    sim_entity *e = &s->entities[i];
    double d = sqrt(fx * fx + fy * fy);
    if (d == 0)
        return 0;
    sim_call c = {.op = OP_TURN, .id = sim_id(i), .desc = {.facing = {fx / d, fy / d}}};
    if (call(s, &c) < 0)
        return -1;
    e->fx = c.desc.facing[0];
    e->fy = c.desc.facing[1];
    return 0;
}

/* A noise at (x, y, z) heard out to `strength` times each hearer's range,
 * from entity `source` (SIZE_MAX: none), tagged as its kind. */
static int do_emit(sim_scene *s, double x, double y, double z, double strength, size_t source)
{
    sim_call c = {.op = OP_EMIT, .stimulus = PERCEPT_STIMULUS_INIT};
    percept_stimulus *st = &c.stimulus;
    st->sense = PERCEPT_HEARING;
    st->x = x;
    st->y = y;
    st->z = z;
    st->strength = strength;
    if (source != SIZE_MAX) {
        c.id = st->source = sim_id(source);
        st->has_source = 1;
        st->tags = 1u << s->entities[source].kind;
    }
    if (s->noise_count == s->noise_cap) {
        size_t cap = s->noise_cap ? 2 * s->noise_cap : 64;
        sim_noise *grown = realloc(s->noises, cap * sizeof *grown);
        if (grown == NULL) {
            snprintf(s->error, sizeof s->error, "out of memory for the noises");
            return -1;
        }
        s->noises = grown;
        s->noise_cap = cap;
    }
    if (call(s, &c) < 0)
        return -1;
    s->noises[s->noise_count++] = (sim_noise){x, y, s->tick, source == SIZE_MAX};
    return 0;
}

static int do_range(sim_scene *s, size_t i, percept_sense sense, double r)
{
    sim_call c = {.op = OP_RANGE, .id = sim_id(i), .sense = sense, .range = r};
    return call(s, &c);
}

/* Makes entity i perceptible to `sense` again. */
static int do_show(sim_scene *s, size_t i, percept_sense sense)
{
    sim_call c = {.op = OP_HIDE, .id = sim_id(i), .sense = sense, .hidden = 0};
    if (call(s, &c) < 0)
        return -1;
    s->entities[i].hidden &= (uint8_t)~PERCEPT_SENSE_BIT(sense);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Behaviour: where each kind walks next                                     */

/* The pace of the story: the same plot in fewer ticks needs faster feet. */
static double pace(const sim_scene *s)
{
    return clamp(200.0 / (s->ticks > 0 ? s->ticks : 1), 0.5, 3.0);
}

static int in_market_square(const sim_scene *s, const sim_entity *e)
{
    return e->x >= s->market_x0 && e->x <= s->market_x1 && e->y >= s->market_y0 &&
           e->y <= s->market_y1;
}

/* Where the fleeing feel safe. */
#define SAFE_DISTANCE 300.0

static int far_from_market(const sim_entity *e)
{
    double dx = e->x - MARKET_X, dy = e->y - MARKET_Y;
    return dx * dx + dy * dy >= (SAFE_DISTANCE - 10) * (SAFE_DISTANCE - 10);
}

/* A point straight away from the market, far out: where panic takes you. */
static void flee_from_market(sim_scene *s, const sim_entity *e, double *x, double *y)
{
    double dx = e->x - MARKET_X, dy = e->y - MARKET_Y;
    double d = sqrt(dx * dx + dy * dy);
    if (d < 1) {
        in_disc(s, 0, 0, 1, &dx, &dy);
        dx -= 0.5;
        d = sqrt(dx * dx + dy * dy) + 1e-9;
    }
    double far = splitmix_between(&s->rng, SAFE_DISTANCE, SAFE_DISTANCE + 80);
    *x = clamp(MARKET_X + dx / d * far, 0, s->size);
    *y = clamp(MARKET_Y + dy / d * far, 0, s->size);
}

/* A short walk through town from where e stands: people mostly stay near home. */
static void stroll(sim_scene *s, sim_entity *e)
{
    in_disc(s, e->x, e->y, 70, &e->tx, &e->ty);
    double dx = e->tx - MARKET_X, dy = e->ty - MARKET_Y;
    if (dx * dx + dy * dy > TOWN_RADIUS * TOWN_RADIUS)
        in_disc(s, MARKET_X, MARKET_Y, TOWN_RADIUS, &e->tx, &e->ty);
}

/*
 * Picks e's next destination for the current phase, and how long it first
 * stays where it is (shopping, chatting, perched); sets its speed.
 */
static void choose_target(sim_scene *s, sim_entity *e)
{
    double speed = sim_profiles[e->kind].speed * pace(s);
    unsigned idle = 0;

    switch ((sim_kind)e->kind) {
    case KIND_VILLAGER:
    case KIND_THIEF:
        if (s->phase == PHASE_WANDER) {
            stroll(s, e);
            idle = 15 + below(s, 45); /* chatting, working */
        } else if (s->phase == PHASE_MARKET && (e->kind == KIND_THIEF || e->market)) {
            in_market(s, &e->tx, &e->ty);
            idle = 4 + below(s, 16);                     /* shopping, or picking pockets */
            speed *= in_market_square(s, e) ? 0.6 : 2.2; /* hurrying there, strolling inside */
        } else if (s->phase == PHASE_MARKET) {
            stroll(s, e);
            idle = 20 + below(s, 40); /* busy at home */
        } else if (far_from_market(e)) {
            e->tx = e->x; /* safe: hides at home until the wolves are gone */
            e->ty = e->y;
            idle = 1000;
        } else {
            flee_from_market(s, e, &e->tx, &e->ty);
            speed *= 2.5;
        }
        break;
    case KIND_GUARD:
        if (s->phase == PHASE_FLEE) {
            in_market(s, &e->tx, &e->ty); /* to the fight */
            speed *= 1.5;
        } else {
            patrol_corner(e->patrol, &e->tx, &e->ty);
            e->patrol = (uint8_t)((e->patrol + 1) % 4);
            e->tx = clamp(e->tx + splitmix_between(&s->rng, -8, 8), 0, s->size);
            e->ty = clamp(e->ty + splitmix_between(&s->rng, -8, 8), 0, s->size);
            idle = s->phase == PHASE_MARKET ? 5 + below(s, 15) : 0; /* at a post */
        }
        break;
    case KIND_WOLF:
        if (s->phase == PHASE_WANDER) {
            in_disc(s, FOREST_X, FOREST_Y, FOREST_R, &e->tx, &e->ty);
        } else if (s->phase == PHASE_MARKET) {
            /* Prowling at the edge of the forest that faces the town. */
            double dx = MARKET_X - FOREST_X, dy = MARKET_Y - FOREST_Y;
            double d = sqrt(dx * dx + dy * dy);
            in_disc(s, FOREST_X + dx / d * FOREST_R, FOREST_Y + dy / d * FOREST_R, 50, &e->tx,
                    &e->ty);
        } else {
            in_market(s, &e->tx, &e->ty); /* the charge */
            speed *= 2;
        }
        break;
    case KIND_OWL:
        in_disc(s, s->size / 2, s->size / 2, s->size / 2, &e->tx, &e->ty);
        e->tz = splitmix_between(&s->rng, 0.6, 1.4) * sim_profiles[KIND_OWL].height;
        idle = below(s, 2) ? 10 + below(s, 20) : 0; /* perched */
        break;
    case KIND_PLAYER:
    default:
        in_disc(s, s->size / 2, s->size / 2, s->size / 2, &e->tx, &e->ty);
        break;
    }
    e->speed = speed;
    e->idle = (uint16_t)(idle / pace(s) + 0.5);
}

/* A guard faces where it walks to. */
static int face_target(sim_scene *s, size_t i)
{
    const sim_entity *e = &s->entities[i];
    return e->kind == KIND_GUARD ? do_turn(s, i, e->tx - e->x, e->ty - e->y) : 0;
}

/* One step of e towards its destination; a new destination on arrival. */
static int walk(sim_scene *s, size_t i)
{
    sim_entity *e = &s->entities[i];
    if (e->idle > 0) { /* stays where it is, then walks on to the destination it has */
        e->idle--;
        /* A guard at its post glances 45 degrees aside and back, every four ticks. */
        if (e->kind != KIND_GUARD || e->idle % 4 != 0)
            return 0;
        return e->idle % 8 ? do_turn(s, i, e->fx - e->fy, e->fx + e->fy)
                           : do_turn(s, i, e->fx + e->fy, e->fy - e->fx);
    }
    double dx = e->tx - e->x, dy = e->ty - e->y, dz = e->tz - e->z;
    double d = sqrt(dx * dx + dy * dy + dz * dz);
    double x = e->tx, y = e->ty, z = e->tz;
    int arrived = d <= e->speed;
    if (arrived) {
        choose_target(s, e);
    } else {
        x = e->x + dx / d * e->speed;
        y = e->y + dy / d * e->speed;
        z = e->z + dz / d * e->speed;
    }
    if ((x != e->x || y != e->y || z != e->z) && do_move(s, i, x, y, z) < 0)
        return -1;
    return arrived ? face_target(s, i) : 0;
}

/* ------------------------------------------------------------------------ */
/* The plot                                                                  */

int sim_phase_end(int ticks, sim_phase phase)
{
    switch (phase) {
    case PHASE_WANDER:
        return ticks * 35 / 100;
    case PHASE_MARKET:
        return ticks * 70 / 100;
    default:
        return ticks;
    }
}

static sim_phase phase_at(const sim_scene *s, int tick)
{
    if (tick <= sim_phase_end(s->ticks, PHASE_WANDER))
        return PHASE_WANDER;
    if (tick <= sim_phase_end(s->ticks, PHASE_MARKET))
        return PHASE_MARKET;
    return PHASE_FLEE;
}

/* Everyone reconsiders at a change of phase; thieves break cover when the wolves come. */
static int enter_phase(sim_scene *s, sim_phase phase)
{
    s->phase = phase;
    for (size_t i = 0; i < s->count; i++) {
        sim_entity *e = &s->entities[i];
        if (e->kind == KIND_OWL || e->kind == KIND_PLAYER)
            continue;
        choose_target(s, e);
        e->idle = 0; /* news travels fast: everyone sets off at once */
        if (e->present && face_target(s, i) < 0)
            return -1;
        if (phase == PHASE_FLEE && e->kind == KIND_THIEF && e->present &&
            (e->hidden & PERCEPT_SENSE_BIT(PERCEPT_SIGHT)) && do_show(s, i, PERCEPT_SIGHT) < 0)
            return -1;
    }
    return 0;
}

/* Dusk: sight shrinks for everyone but the owls. */
static int fall_dusk(sim_scene *s)
{
    s->dusk = 1;
    for (size_t i = 0; i < s->count; i++) {
        const sim_entity *e = &s->entities[i];
        if (e->kind == KIND_OWL || !e->present)
            continue;
        if (do_range(s, i, PERCEPT_SIGHT, sim_profiles[e->kind].range[PERCEPT_SIGHT] * DUSK_SIGHT) <
            0)
            return -1;
    }
    return 0;
}

/* Players log out and back in: one leaves every 20 ticks and returns 12 ticks later elsewhere. */
#define PLAYER_AWAY 12
static int player_churn(sim_scene *s)
{
    size_t first = s->count - s->kind_count[KIND_PLAYER];
    size_t players = s->kind_count[KIND_PLAYER];
    if (players == 0)
        return 0;
    for (size_t i = first; i < s->count; i++) {
        sim_entity *e = &s->entities[i];
        if (!e->present && --e->idle == 0) {
            in_disc(s, s->size / 2, s->size / 2, s->size / 2, &e->x, &e->y);
            choose_target(s, e);
            if (do_add(s, i) < 0)
                return -1;
        }
    }
    if (s->tick % 20 == 0) {
        size_t i = first + (size_t)(s->tick / 20) % players;
        if (s->entities[i].present) {
            if (do_remove(s, i) < 0)
                return -1;
            s->entities[i].idle = PLAYER_AWAY;
        }
    }
    return 0;
}

/* The bell rings every eighth of the run; a wolf howls now and then. */
static int make_noises(sim_scene *s)
{
    if (s->tick * BELLS / s->ticks != (s->tick - 1) * BELLS / s->ticks &&
        do_emit(s, CHURCH_X, CHURCH_Y, 0, BELL_STRENGTH, SIZE_MAX) < 0)
        return -1;
    size_t wolves = s->kind_count[KIND_WOLF];
    if (wolves == 0 || below(s, HOWL_ODDS) != 0)
        return 0;
    /* The creatures are laid out kind by kind: the wolves after the guards. */
    size_t i =
        s->kind_count[KIND_VILLAGER] + s->kind_count[KIND_GUARD] + below(s, (unsigned)wolves);
    const sim_entity *e = &s->entities[i];
    return do_emit(s, e->x, e->y, e->z, HOWL_STRENGTH, i);
}

int sim_scene_step(sim_scene *s)
{
    s->tick++;
    sim_phase phase = phase_at(s, s->tick);
    if (phase != s->phase && enter_phase(s, phase) < 0)
        return -1;
    if (!s->dusk && s->tick > s->ticks * 85 / 100 && fall_dusk(s) < 0)
        return -1;
    if (player_churn(s) < 0)
        return -1;
    for (size_t i = 0; i < s->count; i++)
        if (s->entities[i].present && walk(s, i) < 0)
            return -1;
    return make_noises(s);
}

/* ------------------------------------------------------------------------ */
/* Setting up                                                                */

/* How many of each kind: mostly villagers, a few players. */
static void census(size_t count, size_t n[KIND_COUNT])
{
    size_t players = count / 500;
    players = players < 2 ? 2 : players > 8 ? 8 : players;
    if (players > count / 6)
        players = count / 6;
    n[KIND_PLAYER] = players;
    n[KIND_GUARD] = count * 8 / 100;
    n[KIND_WOLF] = count * 6 / 100;
    n[KIND_OWL] = count * 3 / 100;
    n[KIND_THIEF] = count * 6 / 100;
    /* Small scenes still get one of each, so every profile shows. */
    for (int k = KIND_GUARD; k <= KIND_THIEF; k++)
        if (n[k] == 0 && count >= 12)
            n[k] = 1;
    size_t others = 0;
    for (int k = KIND_GUARD; k < KIND_COUNT; k++)
        others += n[k];
    n[KIND_VILLAGER] = count - others;
}

/* Where a creature of kind k starts. */
static void place(sim_scene *s, sim_entity *e, size_t nth)
{
    switch ((sim_kind)e->kind) {
    case KIND_GUARD: {
        /* Spread along the patrol route. */
        double ax, ay, bx, by, f = splitmix_unit(&s->rng);
        unsigned side = (unsigned)(nth % 4);
        patrol_corner(side, &ax, &ay);
        patrol_corner((side + 1) % 4, &bx, &by);
        e->x = ax + (bx - ax) * f;
        e->y = ay + (by - ay) * f;
        e->patrol = (uint8_t)((side + 1) % 4);
        break;
    }
    case KIND_WOLF:
        in_disc(s, FOREST_X, FOREST_Y, FOREST_R, &e->x, &e->y);
        break;
    case KIND_OWL:
    case KIND_PLAYER:
        in_disc(s, s->size / 2, s->size / 2, s->size / 2, &e->x, &e->y);
        break;
    case KIND_VILLAGER:
    case KIND_THIEF:
    default:
        in_disc(s, MARKET_X, MARKET_Y, TOWN_RADIUS, &e->x, &e->y);
        break;
    }
    e->z = sim_profiles[e->kind].height; /* owls in the air, the others on the ground */
}

int sim_scene_init(sim_scene *s, percept_world *world, size_t count, int ticks, uint64_t seed,
                   int timing, void (*after_call)(void *user, const sim_call *call), void *user)
{
    memset(s, 0, sizeof *s);
    s->world = world;
    s->ticks = ticks;
    s->timing = timing;
    s->after_call = after_call;
    s->after_call_user = user;
    s->seed = seed;
    s->rng = seed;
    s->size = SIM_WORLD_SIZE;
    s->market_x0 = MARKET_X - MARKET_HALF;
    s->market_y0 = MARKET_Y - MARKET_HALF;
    s->market_x1 = MARKET_X + MARKET_HALF;
    s->market_y1 = MARKET_Y + MARKET_HALF;
    s->forest_x = FOREST_X;
    s->forest_y = FOREST_Y;
    s->forest_r = FOREST_R;
    s->church_x = CHURCH_X;
    s->church_y = CHURCH_Y;
    s->phase = PHASE_WANDER;
    s->entities = calloc(count > 0 ? count : 1, sizeof *s->entities);
    if (s->entities == NULL) {
        snprintf(s->error, sizeof s->error, "out of memory for %zu entities", count);
        return -1;
    }
    s->count = count;
    census(count, s->kind_count);

    size_t i = 0;
    for (int k = 0; k < KIND_COUNT; k++) {
        if (s->kind_count[k] > 0 && k != KIND_VILLAGER && s->highlight_count < SIM_MAX_HIGHLIGHTS)
            s->highlights[s->highlight_count++] = i;
        for (size_t nth = 0; nth < s->kind_count[k]; nth++, i++) {
            sim_entity *e = &s->entities[i];
            e->kind = (uint16_t)k;
            e->hidden = (uint8_t)sim_profiles[k].hidden;
            e->market = (uint8_t)(below(s, 100) < 30); /* goes to market on market day */
            place(s, e, nth);
            choose_target(s, e);
            if (k == KIND_GUARD) { /* faces where it walks, or east */
                double dx = e->tx - e->x, dy = e->ty - e->y, d = sqrt(dx * dx + dy * dy);
                e->fx = d > 0 ? dx / d : 1;
                e->fy = d > 0 ? dy / d : 0;
            }
        }
    }
    for (i = 0; i < count; i++)
        if (do_add(s, i) < 0)
            return -1;
    return 0;
}

void sim_scene_free(sim_scene *s)
{
    free(s->entities);
    free(s->noises);
    s->entities = NULL;
    s->noises = NULL;
    s->count = s->noise_count = s->noise_cap = 0;
}

/* ------------------------------------------------------------------------ */
/* Reading the world back                                                    */

double sim_reach(const sim_scene *s, size_t index, percept_sense sense, double *angle, double *half)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    *angle = *half = 0;
    if (percept_get_entity(s->world, sim_id(index), &d) != PERCEPT_OK)
        return 0;
    const percept_sense_params *p = &d.sense[sense];
    if (p->fov < 360) {
        *angle = atan2(d.facing[1], d.facing[0]);
        *half = p->fov * (3.14159265358979323846 / 360);
    }
    return p->range > d.z ? sqrt(p->range * p->range - d.z * d.z) : 0;
}

void sim_profile_text(const sim_profile *p, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < SIM_SENSES && n < size; k++) {
        if (p->range[k] > 0)
            n += (size_t)snprintf(buf + n, size - n, "%s%s %g", n ? ", " : "", sim_sense_names[k],
                                  p->range[k]);
        if (p->fov[k] > 0 && n < size)
            n += (size_t)snprintf(buf + n, size - n, " in a %g\u00b0 cone", p->fov[k]);
    }
    if (p->height > 0 && n < size)
        snprintf(buf + n, size - n, "; flies %g up", p->height);
}

size_t sim_perceived(const sim_scene *s, size_t index, percept_sense sense, percept_id **buf,
                     size_t *cap)
{
    size_t n = 0;
    for (;;) {
        if (percept_perceived(s->world, sim_id(index), sense, *buf, *cap, &n) != PERCEPT_OK)
            return (size_t)-1;
        if (n <= *cap)
            return n;
        percept_id *grown = realloc(*buf, n * sizeof **buf);
        if (grown == NULL)
            return (size_t)-1;
        *buf = grown;
        *cap = n;
    }
}
