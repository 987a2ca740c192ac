/*
 * aoi_clients.c - area-of-interest replication, the way a game server sends
 * each client the entities around its player, in three bands that it
 * would update at different rates: near, mid and far. The world's senses
 * are the bands, named by its config (percept installs one, aoi-bands.ini).
 * percept's ENTER, MOVE and LEAVE events per band are the messages; the
 * server moves every entity in one tick, queues its events per client and
 * band, and sends them: a tick reports no entity that entered and left a
 * band within it.
 *
 * Entities walk on the ground or fly, so distances are in three dimensions.
 * Each band has a margin: an entity that entered a band stays in it until
 * it is that much beyond the band's range, so that one walking along the
 * edge does not flood the client with enters and leaves.
 *
 * Each client keeps the replica the messages build, checked after every
 * tick against the definition (within the range: held; beyond range +
 * margin: not) and percept_perceived(): the events are all a server needs.
 *
 * Build against an installed percept, with the bands' config it installed
 * (pkg-config knows its sysconfdir for any prefix); the config must name the
 * senses near, mid and far, and leave move_events on:
 *   cc -o aoi_clients aoi_clients.c $(pkg-config --cflags --libs percept) \
 *      -DAOI_CONFIG="\"$(pkg-config --variable=sysconfdir percept)/percept/aoi-bands.ini\""
 * Run: ./aoi_clients [CONFIG]
 */
#include <percept.h>

#include <stdint.h>
#include <stdio.h>

#ifndef AOI_CONFIG
#define AOI_CONFIG "/usr/local/etc/percept/aoi-bands.ini"
#endif

#define WORLD 1000.0 /* the map is [0, WORLD] on both axes */
#define CLIENTS 3    /* players, IDs 1 .. CLIENTS */
#define MONSTERS 300 /* IDs CLIENTS + 1 .. CLIENTS + MONSTERS: seen, not seeing */
#define ENTITIES (CLIENTS + MONSTERS)
#define TICKS 20
#define BANDS 3

/* The bands, with the ranges and margins aoi-bands.ini is tuned for. The
 * world numbers its senses in the config's order: `sense` is each band's. */
static const char *const band_name[BANDS] = {"near", "mid", "far"};
static const double range[BANDS] = {32, 96, 256}, margin[BANDS] = {4, 8, 16};
static percept_sense sense[BANDS];

typedef struct entity {
    double x, y, z, vx, vy, vz;
} entity;

/* One client's connection: the messages queued this tick per band, and the
 * replica the messages sent so far have built on the client. */
typedef struct client {
    const char *name;
    unsigned enters[BANDS], updates[BANDS], leaves[BANDS]; /* queued this tick */
    unsigned char known[BANDS][ENTITIES + 1];              /* the replica */
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

/* The event callback: queue the message for the observer's client. Only
 * players observe; monsters have no senses. */
static void on_event(void *user, const percept_event *ev)
{
    (void)user;
    if (ev->observer < 1 || ev->observer > CLIENTS || ev->target > ENTITIES)
        return;
    client *c = &clients[ev->observer - 1];
    int b = 0;
    while (b < BANDS - 1 && sense[b] != ev->sense)
        b++;
    if (ev->kind == PERCEPT_ENTER)
        c->enters[b]++, c->known[b][ev->target] = 1;
    else if (ev->kind == PERCEPT_MOVE)
        c->updates[b]++;
    else if (ev->kind == PERCEPT_LEAVE)
        c->leaves[b]++, c->known[b][ev->target] = 0;
}

/* Moves every entity one step, turning back at the edges of the map and of
 * the sky: one percept_tick(), whose events are the tick's messages. */
static int tick(percept_world *world)
{
    static percept_change moves[ENTITIES];
    for (percept_id id = 1; id <= ENTITIES; id++) {
        entity *e = &ents[id];
        e->vx = e->x + e->vx < 0 || e->x + e->vx > WORLD ? -e->vx : e->vx;
        e->vy = e->y + e->vy < 0 || e->y + e->vy > WORLD ? -e->vy : e->vy;
        e->vz = e->z + e->vz < 0 || e->z + e->vz > 120 ? -e->vz : e->vz;
        e->x += e->vx;
        e->y += e->vy;
        e->z += e->vz;
        moves[id - 1] = (percept_change){id, PERCEPT_CHANGE_MOVE, e->x, e->y, e->z, NULL};
    }
    return percept_tick(world, moves, ENTITIES);
}

/* Whether client c's replica of band b holds what the definition says:
 * every target within the range, none beyond range + margin (in between,
 * whether it is held depends on whether it was), and what
 * percept_perceived() lists. 0 with how many it holds, and how many of them
 * only the margin keeps; -1 after printing the first difference. */
static int check_replica(const percept_world *world, int c, int b, unsigned *held, unsigned *kept)
{
    const client *cl = &clients[c];
    const entity *me = &ents[c + 1];
    percept_id listed[ENTITIES];
    size_t n = 0;
    double near = range[b] * range[b], far = (range[b] + margin[b]) * (range[b] + margin[b]);
    if (percept_perceived(world, (percept_id)(c + 1), sense[b], listed, ENTITIES, &n) != PERCEPT_OK)
        return -1;
    *held = *kept = 0;
    for (percept_id id = 1; id <= ENTITIES; id++) {
        double dx = ents[id].x - me->x, dy = ents[id].y - me->y, dz = ents[id].z - me->z;
        double dd = dx * dx + dy * dy + dz * dz;
        int must = id != (percept_id)(c + 1) && dd <= near, must_not = dd > far;
        *held += cl->known[b][id];
        *kept += cl->known[b][id] && dd > near;
        if ((must && !cl->known[b][id]) || (must_not && cl->known[b][id])) {
            printf("%s: entity %u is %s %s, but the replica %s it\n", cl->name, (unsigned)id,
                   must ? "within" : "beyond", band_name[b], cl->known[b][id] ? "holds" : "lacks");
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (listed[i] > ENTITIES || !cl->known[b][listed[i]])
            n = SIZE_MAX;
    return n == *held ? 0 : -1;
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
    for (int b = 0; b < BANDS; b++) {
        if ((sense[b] = percept_sense_index(world, band_name[b])) < 0) {
            fprintf(stderr, "aoi_clients: %s names no sense '%s'\n", config, band_name[b]);
            percept_world_close(world);
            return 1;
        }
    }
    percept_set_event_callback(world, on_event, NULL);

    int status = 0;
    for (percept_id id = 1; id <= ENTITIES && status == 0; id++) {
        entity *e = &ents[id];
        int flyer = id > CLIENTS && uniform() < 0.2; /* birds, between 20 and 120 up */
        double speed = id <= CLIENTS ? 20.0 : 6.0 + 10.0 * uniform();
        e->x = uniform() * WORLD;
        e->y = uniform() * WORLD;
        e->z = flyer ? 20 + 100 * uniform() : 0;
        e->vx = speed * (uniform() - 0.5);
        e->vy = speed * (uniform() - 0.5);
        e->vz = flyer ? 4 * (uniform() - 0.5) : 0;
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        d.x = e->x;
        d.y = e->y;
        d.z = e->z;
        for (int b = 0; b < BANDS && id <= CLIENTS; b++)
            d.sense[sense[b]] = (percept_sense_params){range[b], margin[b], 360, 0};
        if ((status = percept_add(world, id, &d)) != PERCEPT_OK)
            fprintf(stderr, "aoi_clients: add: %s\n", percept_errmsg(world));
    }

    printf("per client and band: entities held, +entered -left, ~updates sent, and\n"
           "mN: N held only by the margin, beyond the band's range\n");
    for (int t = 0; t <= TICKS && status == 0; t++) {
        /* Tick 0 is the login: the adds above queued each client's first
         * view. The others move everyone once. */
        if (t > 0 && (status = tick(world)) != PERCEPT_OK)
            fprintf(stderr, "aoi_clients: tick %d: %s\n", t, percept_errmsg(world));
        for (int c = 0; c < CLIENTS && status == 0; c++) {
            client *cl = &clients[c];
            printf("tick %2d %-3s", t, cl->name);
            for (int b = 0; b < BANDS && status == 0; b++) {
                unsigned held, kept;
                status = check_replica(world, c, b, &held, &kept);
                printf(" | %s %2u +%u -%u ~%u m%u", band_name[b], held, cl->enters[b],
                       cl->leaves[b], cl->updates[b], kept);
                cl->enters[b] = cl->updates[b] = cl->leaves[b] = 0; /* sent */
            }
            printf(status ? "\ntick %d: %s's replica differs from the world\n" : "\n", t, cl->name);
        }
    }
    if (status == 0)
        printf("every replica matched the world after every tick\n");
    percept_world_close(world);
    return status != 0;
}
