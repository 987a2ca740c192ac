/*
 * scene.c - the story percept-sim plays: a town with a market square and a
 * forest. Villagers and thieves wander, guards patrol, wolves roam the
 * forest, owls glide over everything, players explore; then market day
 * draws the crowd into the square; then the wolves charge and everyone
 * flees, while dusk shortens everyone's sight but the owls'.
 *
 * Only arithmetic and sqrt (both exactly rounded) decide positions, so a
 * seed gives the same run, byte for byte, on every machine.
 */
#include "scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "../cli.h"
#include "../splitmix.h"

/* Ranges differ the way a game's do: the profiles are the point of the demo. */
const sim_profile sim_profiles[KIND_COUNT] = {
    [KIND_VILLAGER] = {"villager", "villagers", "#a39e93", 2.1, {35, 25, 0}, 0, 1.6},
    [KIND_GUARD] = {"guard", "guards", "#1d3557", 2.6, {80, 18, 0}, 0, 2.0},
    [KIND_WOLF] = {"wolf", "wolves", "#8d5524", 2.6, {35, 55, 120}, 0, 2.6},
    [KIND_OWL] = {"owl", "owls", "#7b2cbf", 2.6, {180, 60, 0}, 0, 4.0},
    [KIND_THIEF] =
        {"thief", "thieves", "#111111", 2.1, {55, 45, 0}, PERCEPT_SENSE_BIT(PERCEPT_SIGHT), 2.2},
    [KIND_PLAYER] = {"player", "players", "#e63946", 4.5, {220, 140, 40}, 0, 4.0},
};

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

/* Sight at dusk, as a share of the day's; owls keep theirs. */
#define DUSK_SIGHT 0.6

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

/* Books a finished call; on failure keeps the first message for the tool. */
static int account(sim_scene *s, const sim_call *c, double start, int status, const char *call)
{
    s->op_calls[c->op]++;
    if (s->timing)
        s->op_seconds[c->op] += cli_now_seconds() - start;
    if (status < 0) {
        if (s->error[0] == '\0')
            snprintf(s->error, sizeof s->error, "%s(%u) failed: %s", call, (unsigned)c->id,
                     percept_errmsg(s->world));
        return -1;
    }
    if (s->after_call != NULL)
        s->after_call(s->after_call_user, c);
    return 0;
}

static double start_clock(const sim_scene *s)
{
    return s->timing ? cli_now_seconds() : 0.0;
}

static int do_add(sim_scene *s, size_t i)
{
    sim_entity *e = &s->entities[i];
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    d.x = e->x;
    d.y = e->y;
    for (int k = 0; k < SIM_SENSES; k++)
        d.sense[k].range = sim_profiles[e->kind].range[k];
    if (s->dusk && e->kind != KIND_OWL)
        d.sense[PERCEPT_SIGHT].range *= DUSK_SIGHT;
    d.hidden = e->hidden;
    sim_call c = {.op = OP_ADD, .id = sim_id(i), .desc = d};
    double t = start_clock(s);
    int st = percept_add(s->world, c.id, &d);
    if (account(s, &c, t, st, "percept_add") < 0)
        return -1;
    e->present = 1;
    return 0;
}

static int do_remove(sim_scene *s, size_t i)
{
    sim_call c = {.op = OP_REMOVE, .id = sim_id(i)};
    double t = start_clock(s);
    int st = percept_remove(s->world, c.id);
    if (account(s, &c, t, st, "percept_remove") < 0)
        return -1;
    s->entities[i].present = 0;
    return 0;
}

static int do_move(sim_scene *s, size_t i, double x, double y)
{
    sim_call c = {.op = OP_MOVE, .id = sim_id(i), .desc = {.x = x, .y = y}};
    double t = start_clock(s);
    int st = percept_move(s->world, c.id, x, y);
    if (account(s, &c, t, st, "percept_move") < 0)
        return -1;
    s->entities[i].x = x;
    s->entities[i].y = y;
    return 0;
}

static int do_range(sim_scene *s, size_t i, percept_sense sense, double r)
{
    sim_call c = {.op = OP_RANGE, .id = sim_id(i), .sense = sense, .range = r};
    double t = start_clock(s);
    int st = percept_set_range(s->world, c.id, sense, r);
    return account(s, &c, t, st, "percept_set_range");
}

static int do_hidden(sim_scene *s, size_t i, percept_sense sense, int hidden)
{
    sim_call c = {.op = OP_HIDE, .id = sim_id(i), .sense = sense, .hidden = hidden};
    double t = start_clock(s);
    int st = percept_set_hidden(s->world, c.id, sense, hidden);
    if (account(s, &c, t, st, "percept_set_hidden") < 0)
        return -1;
    if (hidden)
        s->entities[i].hidden |= (uint8_t)PERCEPT_SENSE_BIT(sense);
    else
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

/* One step of e towards its destination; a new destination on arrival. */
static int walk(sim_scene *s, size_t i)
{
    sim_entity *e = &s->entities[i];
    if (e->idle > 0) { /* stays where it is, then walks on to the destination it has */
        e->idle--;
        return 0;
    }
    double dx = e->tx - e->x, dy = e->ty - e->y;
    double d = sqrt(dx * dx + dy * dy);
    double x, y;
    if (d <= e->speed) {
        x = e->tx;
        y = e->ty;
        choose_target(s, e);
    } else {
        x = e->x + dx / d * e->speed;
        y = e->y + dy / d * e->speed;
    }
    if (x == e->x && y == e->y)
        return 0;
    return do_move(s, i, x, y);
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
        if (phase == PHASE_FLEE && e->kind == KIND_THIEF && e->present &&
            (e->hidden & PERCEPT_SENSE_BIT(PERCEPT_SIGHT)) && do_hidden(s, i, PERCEPT_SIGHT, 0) < 0)
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
    return 0;
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
    s->entities = NULL;
    s->count = 0;
}

/* ------------------------------------------------------------------------ */
/* Reading the world back                                                    */

double sim_range(const sim_scene *s, size_t index, percept_sense sense)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    if (percept_get_entity(s->world, sim_id(index), &d) != PERCEPT_OK)
        return 0;
    return d.sense[sense].range;
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
