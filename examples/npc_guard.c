/*
 * npc_guard.c - NPC AI written the way a game server would: two guards at a
 * town gate raise the alarm when an enemy comes into sight, turn to
 * investigate what they hear, and lose track when it leaves their senses.
 * percept tells them, through events, what their senses pick up.
 *
 * Build against an installed percept, with the config it installed as the
 * default (pkg-config knows its sysconfdir for any prefix):
 *   cc -o npc_guard npc_guard.c $(pkg-config --cflags --libs percept) \
 *      -DNPC_GUARD_CONFIG="\"$(pkg-config --variable=sysconfdir percept)/percept/percept.ini\""
 * Run: ./npc_guard [CONFIG]
 */
#include <percept.h>

#include <stdio.h>
#include <string.h>

#ifndef NPC_GUARD_CONFIG
#define NPC_GUARD_CONFIG "/usr/local/etc/percept/percept.ini"
#endif

/* ------------------------------------------------------------------------ */
/* The cast                                                                  */

enum role { GUARD, THIEF, WOLF, VILLAGER };
enum mood { PATROL, INVESTIGATE, ALERT };

static const char *const mood_name[] = {"patrolling", "investigating", "ALERT"};

typedef struct npc {
    percept_id id;
    const char *name;
    enum role role;
    double x, y;
    double vx, vy; /* scripted walk per tick (non-guards) */
    int present;
    /* The guard's mind: what it is doing and what it is after. */
    enum mood mood;
    percept_id focus;      /* the enemy or noise it follows, 0 for none */
    double goal_x, goal_y; /* where it is heading */
    double post_x;         /* patrol: walks between post_x - 30 and post_x + 30 */
    int dir;
} npc;

static npc cast[] = {
    {1, "Aldric", GUARD, 100, 100, 0, 0, 1, PATROL, 0, 0, 0, 100, 1},
    {2, "Brenna", GUARD, 220, 100, 0, 0, 1, PATROL, 0, 0, 0, 220, -1},
    {10, "the thief", THIEF, 300, 110, -3, -0.5, 1, PATROL, 0, 0, 0, 0, 0},
    {11, "the wolf", WOLF, 0, 190, 3, -2, 1, PATROL, 0, 0, 0, 0, 0},
    {12, "a villager", VILLAGER, 160, 40, 0, 2, 1, PATROL, 0, 0, 0, 0, 0},
};
#define CAST (sizeof cast / sizeof cast[0])

static npc *find(percept_id id)
{
    for (size_t i = 0; i < CAST; i++)
        if (cast[i].id == id)
            return &cast[i];
    return NULL;
}

static int is_enemy(const npc *n)
{
    return n != NULL && (n->role == THIEF || n->role == WOLF);
}

/* ------------------------------------------------------------------------ */
/* The guards' senses: percept's events                                      */

static int tick;

static void set_mood(npc *g, enum mood m, percept_id focus, double x, double y)
{
    if (g->mood != m)
        printf("  %s is now %s\n", g->name, mood_name[m]);
    g->mood = m;
    g->focus = focus;
    g->goal_x = x;
    g->goal_y = y;
}

/*
 * Called by percept for each change of what anyone perceives. The world may
 * be read here but not changed: the guard only decides, and the main loop
 * carries the decision out after the call returns.
 */
static void on_event(void *user, const percept_event *ev)
{
    percept_world *world = user;
    npc *g = find(ev->observer), *t = find(ev->target);

    if (g == NULL || t == NULL || g->role != GUARD)
        return; /* only the guards have a mind in this example */

    if (ev->kind == PERCEPT_ENTER && ev->sense == PERCEPT_SIGHT) {
        if (is_enemy(t)) {
            printf("tick %2d: %s sees %s at (%.0f, %.0f): raises the alarm!\n", tick, g->name,
                   t->name, ev->x, ev->y);
            set_mood(g, ALERT, t->id, ev->x, ev->y);
        } else {
            printf("tick %2d: %s sees %s and nods\n", tick, g->name, t->name);
        }
    } else if (ev->kind == PERCEPT_ENTER && ev->sense == PERCEPT_HEARING) {
        /* Something heard but not seen: a thief in the shadows, or just footsteps. */
        if (g->mood == PATROL && is_enemy(t) &&
            percept_perceives(world, g->id, t->id, PERCEPT_SIGHT) != 1) {
            printf("tick %2d: %s hears something at (%.0f, %.0f) and turns to investigate\n", tick,
                   g->name, ev->x, ev->y);
            set_mood(g, INVESTIGATE, t->id, ev->x, ev->y);
        }
    } else if (ev->kind == PERCEPT_MOVE && ev->target == g->focus) {
        g->goal_x = ev->x; /* keeps following what it senses */
        g->goal_y = ev->y;
    } else if (ev->kind == PERCEPT_LEAVE && ev->target == g->focus) {
        /* Still sensed another way? Then the trail is not lost yet. */
        static const char *const verb[] = {"sees", "hears", "smells"};
        int still = -1;
        for (int s = PERCEPT_SENSE_COUNT - 1; s >= 0; s--)
            if (percept_perceives(world, g->id, t->id, (percept_sense)s) == 1)
                still = s;
        if (still >= 0) {
            if (g->mood == ALERT && ev->sense == PERCEPT_SIGHT) {
                printf("tick %2d: %s loses sight of %s but still %s it\n", tick, g->name, t->name,
                       verb[still]);
                set_mood(g, INVESTIGATE, t->id, ev->x, ev->y);
            }
        } else {
            printf("tick %2d: %s loses track of %s at (%.0f, %.0f)\n", tick, g->name, t->name,
                   ev->x, ev->y);
            set_mood(g, PATROL, 0, g->post_x, 100);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The game loop                                                             */

static int check(percept_world *world, int status, const char *what)
{
    if (status != PERCEPT_OK)
        fprintf(stderr, "npc_guard: %s: %s\n", what, percept_errmsg(world));
    return status;
}

/* Moves a guard one step according to its mood. */
static double step_towards(double from, double to, double speed)
{
    double d = to - from;
    return d > speed ? from + speed : d < -speed ? from - speed : to;
}

static int move_guard(percept_world *world, npc *g)
{
    if (g->mood == PATROL) {
        if (g->y != 100) {
            g->y = step_towards(g->y, 100, 4); /* back to the wall first */
        } else {
            g->x += 3 * g->dir;
            if (g->x > g->post_x + 30 || g->x < g->post_x - 30)
                g->dir = -g->dir;
        }
    } else {
        double speed = g->mood == ALERT ? 4 : 2; /* chasing runs, investigating creeps */
        g->x = step_towards(g->x, g->goal_x, speed);
        g->y = step_towards(g->y, g->goal_y, speed);
    }
    return check(world, percept_move(world, g->id, g->x, g->y), "move");
}

int main(int argc, char **argv)
{
    const char *config = argc > 1 ? argv[1] : NPC_GUARD_CONFIG;
    percept_world *world;
    percept_error err;

    if (percept_world_open(&world, config, NULL, &err) != PERCEPT_OK) {
        fprintf(stderr, "npc_guard: %s\n", err.text);
        return 1;
    }
    percept_set_event_callback(world, on_event, world);

    /* Guards see far and hear little; the wolf smells; the thief hides from sight. */
    for (size_t i = 0; i < CAST; i++) {
        npc *n = &cast[i];
        percept_entity_desc d;
        memset(&d, 0, sizeof d);
        d.x = n->x;
        d.y = n->y;
        if (n->role == GUARD) {
            d.range[PERCEPT_SIGHT] = 60;
            d.range[PERCEPT_HEARING] = 25;
        } else if (n->role == WOLF) {
            d.range[PERCEPT_SIGHT] = 20;
            d.range[PERCEPT_HEARING] = 40;
            d.range[PERCEPT_SMELL] = 80;
        } else {
            d.range[PERCEPT_SIGHT] = 40;
            d.range[PERCEPT_HEARING] = 30;
        }
        if (n->role == THIEF)
            d.hidden = PERCEPT_SENSE_BIT(PERCEPT_SIGHT);
        if (check(world, percept_add(world, n->id, &d), "add") != PERCEPT_OK)
            return 1;
    }
    /* Standard error: the story on standard output is the same whatever the backends. */
    fprintf(stderr, "npc_guard: %s; backends: sight=%s hearing=%s smell=%s\n", config,
            percept_backend_name(world, PERCEPT_SIGHT),
            percept_backend_name(world, PERCEPT_HEARING),
            percept_backend_name(world, PERCEPT_SMELL));

    for (tick = 1; tick <= 60; tick++) {
        /* The world's scripted characters. */
        for (size_t i = 0; i < CAST; i++) {
            npc *n = &cast[i];
            if (n->role == GUARD || !n->present)
                continue;
            n->x += n->vx;
            n->y += n->vy;
            if (check(world, percept_move(world, n->id, n->x, n->y), "move") != PERCEPT_OK)
                return 1;
        }
        npc *thief = find(10), *wolf = find(11);
        if (tick == 26) {
            printf("tick %2d: the thief steps into the torchlight\n", tick);
            thief->vx = 6, thief->vy = 3; /* and runs */
            percept_set_hidden(world, thief->id, PERCEPT_SIGHT, 0);
        }
        if (tick == 35 && wolf->present) {
            printf("tick %2d: the wolf slinks back into the forest\n", tick);
            wolf->present = 0;
            if (check(world, percept_remove(world, wolf->id), "remove") != PERCEPT_OK)
                return 1;
        }
        /* The guards act on what they decided in the callbacks. */
        for (size_t i = 0; i < CAST; i++)
            if (cast[i].role == GUARD && move_guard(world, &cast[i]) != PERCEPT_OK)
                return 1;
    }

    for (size_t i = 0; i < CAST; i++)
        if (cast[i].role == GUARD)
            printf("%s ends %s at (%.0f, %.0f)\n", cast[i].name, mood_name[cast[i].mood], cast[i].x,
                   cast[i].y);
    percept_world_close(world);
    return 0;
}
