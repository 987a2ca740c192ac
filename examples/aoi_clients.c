/*
 * aoi_clients.c - area-of-interest replication, the way a game server sends
 * each client the entities around its player: SPAWN when one comes into the
 * player's view, an UPDATE with its position while it moves in view, and
 * DESPAWN when it leaves. percept's ENTER, MOVE and LEAVE events are those
 * messages; the server only queues them per client and sends them once the
 * tick's moves are made.
 *
 * Each client keeps the replica the messages build. After every tick the
 * program checks each replica against the definition of the relation (the
 * distance, computed here) and against percept_perceived(), and exits 1 if
 * they differ: the events are all a server needs.
 *
 * Build against an installed percept, with the config it installed as the
 * default (pkg-config knows its sysconfdir for any prefix); the config must
 * leave move_events on:
 *   cc -o aoi_clients aoi_clients.c $(pkg-config --cflags --libs percept) \
 *      -DAOI_CONFIG="\"$(pkg-config --variable=sysconfdir percept)/percept/percept.ini\""
 * Run: ./aoi_clients [CONFIG]
 */
#include <percept.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef AOI_CONFIG
#define AOI_CONFIG "/usr/local/etc/percept/percept.ini"
#endif

#define WORLD 400.0  /* the map is [0, WORLD] on both axes */
#define VIEW 60.0    /* a player's view: its sight range */
#define CLIENTS 3    /* players, IDs 1 .. CLIENTS */
#define MONSTERS 200 /* IDs CLIENTS + 1 .. CLIENTS + MONSTERS: seen, not seeing */
#define ENTITIES (CLIENTS + MONSTERS)
#define TICKS 20

typedef struct entity {
    double x, y, vx, vy;
} entity;

/* One client's connection: the messages queued this tick, and the replica
 * of the world the messages sent so far have built on the client. */
typedef struct client {
    const char *name;
    unsigned spawns, updates, despawns; /* queued this tick */
    unsigned char known[ENTITIES + 1];  /* the replica: known[id] */
    double seen_x[ENTITIES + 1], seen_y[ENTITIES + 1];
} client;

static entity ents[ENTITIES + 1]; /* by ID; 0 unused */
static client clients[CLIENTS] = {{.name = "ada"}, {.name = "bo"}, {.name = "cy"}};

/* A small deterministic generator, so every run tells the same story. */
static uint32_t rng = 12345;
static double uniform(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) * (1.0 / 16777216.0);
}

/*
 * The event callback: queue the message for the observer's client. Only
 * players observe (monsters have no senses), and players have only sight,
 * so each (observer, target) gets at most one event per move. With several
 * senses, a server would send one SPAWN on the first sense that perceives
 * a target, one DESPAWN on the last that stops, and one UPDATE per move
 * however many senses report it.
 */
static void on_event(void *user, const percept_event *ev)
{
    (void)user;
    if (ev->observer < 1 || ev->observer > CLIENTS || ev->target > ENTITIES)
        return;
    client *c = &clients[ev->observer - 1];
    switch (ev->kind) {
    case PERCEPT_ENTER: /* SPAWN target at (x, y) */
        c->spawns++;
        c->known[ev->target] = 1;
        break;
    case PERCEPT_MOVE: /* UPDATE target to (x, y) */
        c->updates++;
        break;
    case PERCEPT_LEAVE: /* DESPAWN target */
        c->despawns++;
        c->known[ev->target] = 0;
        break;
    }
    c->seen_x[ev->target] = ev->x;
    c->seen_y[ev->target] = ev->y;
}

/* Walks every entity one step, turning back at the edges, and makes the
 * tick's moves in one call. */
static int tick(percept_world *world)
{
    percept_position moves[ENTITIES];
    for (percept_id id = 1; id <= ENTITIES; id++) {
        entity *e = &ents[id];
        if (e->x + e->vx < 0 || e->x + e->vx > WORLD)
            e->vx = -e->vx;
        if (e->y + e->vy < 0 || e->y + e->vy > WORLD)
            e->vy = -e->vy;
        e->x += e->vx;
        e->y += e->vy;
        moves[id - 1] = (percept_position){id, e->x, e->y};
    }
    return percept_move_many(world, moves, ENTITIES);
}

/* Whether client c's replica is the truth: the targets within its view by
 * the definition (dx*dx + dy*dy <= r*r), which percept_perceived() lists
 * too, each last reported where it stands. Prints the first difference. */
static int replica_ok(const percept_world *world, int c)
{
    const client *cl = &clients[c];
    const entity *me = &ents[c + 1];
    percept_id listed[ENTITIES];
    size_t n = 0;
    if (percept_perceived(world, (percept_id)(c + 1), PERCEPT_SIGHT, listed, ENTITIES, &n) !=
        PERCEPT_OK)
        return 0;
    size_t in_view = 0;
    for (percept_id id = 1; id <= ENTITIES; id++) {
        double dx = ents[id].x - me->x, dy = ents[id].y - me->y;
        int visible = id != (percept_id)(c + 1) && dx * dx + dy * dy <= VIEW * VIEW;
        in_view += (size_t)visible;
        if (visible != cl->known[id]) {
            printf("%s: entity %u is %s, but the replica %s it\n", cl->name, (unsigned)id,
                   visible ? "in view" : "out of view", cl->known[id] ? "holds" : "lacks");
            return 0;
        }
        if (visible && (cl->seen_x[id] != ents[id].x || cl->seen_y[id] != ents[id].y)) {
            printf("%s: entity %u is at (%g, %g), but the replica has it at (%g, %g)\n", cl->name,
                   (unsigned)id, ents[id].x, ents[id].y, cl->seen_x[id], cl->seen_y[id]);
            return 0;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (listed[i] > ENTITIES || !cl->known[listed[i]])
            return 0;
    return n == in_view;
}

int main(int argc, char **argv)
{
    const char *config = argc > 1 ? argv[1] : AOI_CONFIG;
    percept_world *world;
    percept_error err;
    if (percept_world_open(&world, config, NULL, &err) != PERCEPT_OK) {
        fprintf(stderr, "aoi_clients: %s\n", err.text);
        return 1;
    }
    percept_set_event_callback(world, on_event, NULL);

    for (percept_id id = 1; id <= ENTITIES; id++) {
        entity *e = &ents[id];
        e->x = uniform() * WORLD;
        e->y = uniform() * WORLD;
        double speed = id <= CLIENTS ? 6.0 : 2.0 + 3.0 * uniform();
        double a = uniform(), b = uniform() - 0.5;
        e->vx = speed * (a - 0.5);
        e->vy = speed * b;
        percept_entity_desc d;
        memset(&d, 0, sizeof d);
        d.x = e->x;
        d.y = e->y;
        if (id <= CLIENTS)
            d.range[PERCEPT_SIGHT] = VIEW; /* a player sees its view; monsters sense nothing */
        if (percept_add(world, id, &d) != PERCEPT_OK) {
            fprintf(stderr, "aoi_clients: add: %s\n", percept_errmsg(world));
            percept_world_close(world);
            return 1;
        }
    }

    int status = 0;
    for (int t = 0; t <= TICKS && status == 0; t++) {
        /* Tick 0 is the login: the adds above queued each client's first
         * view. The others move everyone once. */
        if (t > 0 && tick(world) != PERCEPT_OK) {
            fprintf(stderr, "aoi_clients: tick %d: %s\n", t, percept_errmsg(world));
            status = 1;
            break;
        }
        for (int c = 0; c < CLIENTS; c++) {
            client *cl = &clients[c];
            if (!replica_ok(world, c)) {
                printf("tick %d: %s's replica differs from the world\n", t, cl->name);
                status = 1;
                break;
            }
            unsigned known = 0;
            for (percept_id id = 1; id <= ENTITIES; id++)
                known += cl->known[id];
            printf("tick %2d %-3s  spawn %2u  update %3u  despawn %2u  in view %2u\n", t, cl->name,
                   cl->spawns, cl->updates, cl->despawns, known);
            cl->spawns = cl->updates = cl->despawns = 0; /* sent */
        }
    }
    if (status == 0)
        printf("every replica matched the world after every tick\n");
    percept_world_close(world);
    return status;
}
