/*
 * npc_guard.c - NPC AI written the way a game server would: two guards at a
 * town gate watch a cone ahead of them, raise the alarm when an enemy comes
 * into view, and turn towards what they hear: footsteps, and a gunshot.
 * percept tells them what their senses pick up, through events: who enters
 * and leaves their sight, and the noises (stimuli) that reach their ears.
 * Their own townsfolk they ignore, by tags.
 *
 * Build against an installed percept, with the config it installed as the
 * default (pkg-config knows its sysconfdir for any prefix):
 *   cc -o npc_guard npc_guard.c $(pkg-config --cflags --libs percept) \
 *      -DNPC_GUARD_CONFIG="\"$(pkg-config --variable=sysconfdir percept)/percept/percept.ini\""
 * Run: ./npc_guard [CONFIG]
 */
#include <percept.h>

#include <stdio.h>

#ifndef NPC_GUARD_CONFIG
#define NPC_GUARD_CONFIG "/usr/local/etc/percept/percept.ini"
#endif

enum role { GUARD, THIEF, WOLF, VILLAGER };
enum mood { PATROL, INVESTIGATE, ALERT };
/* Tags: what an entity is, for the guards' ignore masks. */
enum { TOWNSFOLK = 1, OUTLAW = 2, BEAST = 4 };

static const char *const mood_name[] = {"patrolling", "investigating", "ALERT"};

typedef struct npc {
    percept_id id;
    const char *name;
    enum role role;
    double x, y, vx, vy; /* the others' scripted walk per tick; a guard's beat: vx, +1 or -1 */
    uint32_t tags;
    double stride; /* the loudness of its footsteps: 0 for none */
    struct {       /* what the story changes, from zero */
        int gone;  /* it has left the world */
        /* A guard's mind: what it is doing, what it follows, where it goes. */
        enum mood mood;
        percept_id focus;
        double goal_x, goal_y;
    };
} npc;

static npc cast[] = {
    {1, "Aldric", GUARD, 100, 100, 1, 0, TOWNSFOLK, 1, {0}},
    {2, "Brenna", GUARD, 220, 100, -1, 0, TOWNSFOLK, 1, {0}},
    {10, "the thief", THIEF, 270, 110, -2.5, 0, OUTLAW, 0.5, {0}},
    {11, "the wolf", WOLF, -30, 200, 3, -2, BEAST, 0, {0}},
    {12, "a villager", VILLAGER, 160, 30, 0, 2, TOWNSFOLK, 1, {0}},
};
/* A guard walks its beat 30 either side of where it starts. */
static const double post_x[] = {100, 220};
#define CAST (sizeof cast / sizeof cast[0])

static int tick;

static npc *find(percept_id id)
{
    for (size_t i = 0; i < CAST; i++)
        if (cast[i].id == id)
            return &cast[i];
    return NULL;
}

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
 * Called by percept for every change of what anyone perceives, and every
 * noise heard. The world may be read here but not changed: the guard only
 * decides, and the game loop moves and turns it after the call returns.
 */
static void on_event(void *user, const percept_event *ev)
{
    npc *g = find(ev->observer), *t = ev->has_source ? find(ev->target) : NULL;
    (void)user;
    if (g == NULL || g->role != GUARD)
        return; /* only the guards have a mind in this example */
    if (ev->kind == PERCEPT_STIMULUS && g->mood != ALERT) {
        if (g->mood == PATROL || t == NULL)
            printf("tick %2d: %s hears %s at (%.0f, %.0f) and turns to look\n", tick, g->name,
                   t ? "footsteps" : "a gunshot", ev->x, ev->y);
        set_mood(g, INVESTIGATE, 0, ev->x, ev->y);
    } else if (ev->kind == PERCEPT_ENTER && ev->sense == PERCEPT_SIGHT) {
        /* Townsfolk never get here: the guards' sight ignores their tag. */
        printf("tick %2d: %s sees %s at (%.0f, %.0f): raises the alarm!\n", tick, g->name, t->name,
               ev->x, ev->y);
        set_mood(g, ALERT, t->id, ev->x, ev->y);
    } else if (ev->kind == PERCEPT_MOVE && ev->target == g->focus) {
        g->goal_x = ev->x; /* keeps after what it sees */
        g->goal_y = ev->y;
    } else if (ev->kind == PERCEPT_LEAVE && ev->sense == PERCEPT_SIGHT && ev->target == g->focus) {
        printf("tick %2d: %s loses sight of %s at (%.0f, %.0f)\n", tick, g->name, t->name, ev->x,
               ev->y);
        set_mood(g, INVESTIGATE, 0, ev->x, ev->y);
    }
}

static int check(percept_world *world, int status, const char *what)
{
    if (status != PERCEPT_OK)
        fprintf(stderr, "npc_guard: %s: %s\n", what, percept_errmsg(world));
    return status;
}

static double step_towards(double from, double to, double speed)
{
    double d = to - from;
    return d > speed ? from + speed : d < -speed ? from - speed : to;
}

/* One step of a guard, who faces where it goes, or what it has seen: both
 * in one change (percept_update()), since a turn and a move apart would be
 * two, between which a target on the edge of the cone could leave and come
 * back. An alerted guard keeps its distance, or it would face past. */
static int move_guard(percept_world *world, npc *g)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    double speed = g->mood == ALERT ? 4 : 2;
    if (g->mood == PATROL) {
        if (g->x == g->goal_x && g->y == g->goal_y)
            g->vx = -g->vx; /* the end of its beat */
        g->goal_x = post_x[g->id - 1] + 30 * g->vx;
        g->goal_y = 100;
    } else if (g->mood == INVESTIGATE && g->x == g->goal_x && g->y == g->goal_y) {
        printf("tick %2d: %s finds nothing at (%.0f, %.0f)\n", tick, g->name, g->x, g->y);
        set_mood(g, PATROL, 0, g->x, g->y);
    }
    double dx = g->goal_x - g->x, dy = g->goal_y - g->y;
    int close = g->mood == ALERT && dx * dx + dy * dy < 15 * 15;
    if (dx == 0 && dy == 0)
        return PERCEPT_OK; /* nowhere to go */
    if (check(world, percept_get_entity(world, g->id, &d), "read") != PERCEPT_OK)
        return -1;
    d.x = g->x = close ? g->x : step_towards(g->x, g->goal_x, speed);
    d.y = g->y = close ? g->y : step_towards(g->y, g->goal_y, speed);
    double fx = g->goal_x - g->x, fy = g->goal_y - g->y; /* faces what it is after */
    d.facing[0] = fx != 0 || fy != 0 ? fx : dx;
    d.facing[1] = fx != 0 || fy != 0 ? fy : dy;
    return check(world, percept_update(world, g->id, &d), "step");
}

/* A noise at (x, y), heard `loudness` times as far as a footstep: made by
 * `source`, or by no one in the world (NULL). */
static int noise(percept_world *world, double x, double y, double loudness, const npc *source)
{
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = PERCEPT_HEARING;
    st.x = x;
    st.y = y;
    st.strength = loudness;
    st.has_source = source != NULL;
    st.source = source ? source->id : 0;
    st.tags = source ? source->tags : 0;
    return check(world, percept_emit(world, &st), "noise");
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
    percept_set_event_callback(world, on_event, NULL);
    for (size_t i = 0; i < CAST; i++) {
        npc *n = &cast[i];
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        d.x = n->x;
        d.y = n->y;
        d.tags = n->tags;
        if (n->role == GUARD) {
            /* A 120 degree cone out to 60, kept out to 75 once seen; ears for 30. */
            d.facing[0] = n->vx;
            d.sense[PERCEPT_SIGHT] = (percept_sense_params){60, 15, 120, TOWNSFOLK};
            d.sense[PERCEPT_HEARING] = (percept_sense_params){30, 0, 360, TOWNSFOLK};
        } else {
            d.sense[PERCEPT_SIGHT].range = 40;
        }
        if (n->role == THIEF) /* in the shadows: unseen, but not unheard */
            d.hidden = PERCEPT_SENSE_BIT(PERCEPT_SIGHT);
        if (check(world, percept_add(world, n->id, &d), "add") != PERCEPT_OK)
            return 1;
    }
    /* Standard error: the story on standard output is the same whatever the backends. */
    fprintf(stderr, "npc_guard: %s; backends: sight=%s hearing=%s\n", config,
            percept_backend_name(world, PERCEPT_SIGHT),
            percept_backend_name(world, PERCEPT_HEARING));

    for (tick = 1; tick <= 60; tick++) {
        for (size_t i = 0; i < CAST; i++) { /* the others walk their script */
            npc *n = &cast[i];
            if (n->role == GUARD || n->gone)
                continue;
            n->x += n->vx;
            n->y += n->vy;
            if (check(world, percept_move(world, n->id, n->x, n->y), "move") != PERCEPT_OK ||
                (n->stride > 0 && noise(world, n->x, n->y, n->stride, n) != PERCEPT_OK))
                return 1;
        }
        npc *thief = find(10), *wolf = find(11);
        if (tick == 26) {
            printf("tick %2d: the thief steps into the torchlight\n", tick);
            if (check(world, percept_set_hidden(world, thief->id, PERCEPT_SIGHT, 0), "show"))
                return 1;
        }
        if (tick == 28) {
            printf("tick %2d: the thief bolts\n", tick);
            thief->vx = -5, thief->vy = 6, thief->stride = 2;
        }
        if (tick == 44) {
            printf("tick %2d: the wolf slinks back into the forest\n", tick);
            wolf->gone = 1;
            if (check(world, percept_remove(world, wolf->id), "remove") != PERCEPT_OK)
                return 1;
        }
        if (tick == 52) { /* a hunter in the woods, whom no one sees */
            printf("tick %2d: a shot rings out in the woods\n", tick);
            if (noise(world, 150, 180, 6, NULL) != PERCEPT_OK)
                return 1;
        }
        for (size_t i = 0; i < CAST; i++) /* the guards act on what they decided */
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
