/*
 * scene.h - the simulated game world of percept-sim: kinds of creature with
 * their sense profiles, the town's map, and the behaviour that moves
 * everyone each tick through the public percept API.
 */
#ifndef PERCEPT_SIM_SCENE_H
#define PERCEPT_SIM_SCENE_H

#include <percept.h>

#include <stddef.h>
#include <stdint.h>

/* The kinds of creature; each has its own senses, look and behaviour. */
typedef enum sim_kind {
    KIND_VILLAGER,
    KIND_GUARD,
    KIND_WOLF,
    KIND_OWL,
    KIND_THIEF,
    KIND_PLAYER,
    KIND_COUNT
} sim_kind;

/* The senses the town's world has: the default ones, sight, hearing and
 * smell, in that order (PERCEPT_SIGHT, ...). */
#define SIM_SENSES 3
extern const char *const sim_sense_names[SIM_SENSES];

/* The town is [0, SIM_WORLD_SIZE] x [0, SIM_WORLD_SIZE] in world units. */
#define SIM_WORLD_SIZE 1024.0

/* The pictures draw the town this many pixels square. */
#define SIM_MAP_PX 760

/* A kind's senses and look, shared by the writers of the pictures. */
typedef struct sim_profile {
    const char *name;   /* singular: "guard" */
    const char *plural; /* "guards" */
    const char *color;  /* fill colour in the pictures */
    double dot;         /* radius it is drawn with in the pictures, in pixels */
    double range[SIM_SENSES];
    double margin[SIM_SENSES];   /* keeps what it perceives this much beyond the range */
    double fov[SIM_SENSES];      /* the full angle of a cone, in degrees; 0: all round */
    uint32_t ignore[SIM_SENSES]; /* the tags it ignores by the sense; a creature's: 1 << kind */
    unsigned hidden;             /* PERCEPT_SENSE_BIT()s it is hidden from at the start */
    double speed;                /* world units per tick when walking */
    double height;               /* how high it flies; 0: it walks on the ground */
} sim_profile;

extern const sim_profile sim_profiles[KIND_COUNT];

/* The colour of a sense's ranges and perception links in the pictures. */
extern const char *const sim_sense_colors[SIM_SENSES];

/* The phases of a run, in order. */
typedef enum sim_phase { PHASE_WANDER, PHASE_MARKET, PHASE_FLEE, PHASE_COUNT } sim_phase;

/* A phase in a few words: "wandering", "market day", "wolves! all flee". */
const char *sim_phase_text(sim_phase phase);

/* The last tick of a phase in a run of `ticks` ticks (0 when the run is too short for it). */
int sim_phase_end(int ticks, sim_phase phase);

/* One creature. Its percept ID is its index + 1. */
typedef struct sim_entity {
    double x, y, z;    /* where it is (also while logged out, for players) */
    double tx, ty, tz; /* where it is walking (or flying) to */
    double fx, fy;     /* the way it faces: guards, whose sight is a cone */
    double speed;
    uint16_t kind; /* sim_kind */
    uint16_t idle; /* ticks left standing still */
    uint8_t present;
    uint8_t hidden; /* PERCEPT_SENSE_BIT()s, as the world knows them */
    uint8_t patrol; /* guards: the next corner of the patrol route */
    uint8_t market; /* villagers: goes to the market on market day */
} sim_entity;

/* The few entities the pictures single out, with their ranges and links. */
#define SIM_MAX_HIGHLIGHTS 5

/* What a call of the library cost; the tool accumulates these. */
typedef enum sim_op {
    OP_ADD,
    OP_MOVE,
    OP_TURN,
    OP_REMOVE,
    OP_RANGE,
    OP_HIDE,
    OP_EMIT,
    OP_COUNT
} sim_op;

/* The calls as the summary names them: "add", "move", ... */
extern const char *const sim_op_names[OP_COUNT];

/* One call of the library the scene made, with its arguments: what a tool
 * needs to write the run as a trace. Only the fields of its op are set. */
typedef struct sim_call {
    sim_op op;
    percept_id id;
    percept_entity_desc desc;  /* OP_ADD: all of it; OP_MOVE: x, y, z; OP_TURN: facing */
    percept_sense sense;       /* OP_RANGE, OP_HIDE */
    double range;              /* OP_RANGE */
    int hidden;                /* OP_HIDE: 1 hides, 0 shows */
    percept_stimulus stimulus; /* OP_EMIT (id: its source, if it has one) */
} sim_call;

/* A stimulus the town made: a wolf's howl, or the church bell. */
typedef struct sim_noise {
    double x, y;
    int tick;
    int bell; /* 1: the bell; 0: a howl */
} sim_noise;

typedef struct sim_scene {
    percept_world *world;
    double size; /* the world is [0, size] x [0, size] */
    double market_x0, market_y0, market_x1, market_y1;
    double forest_x, forest_y, forest_r;
    double church_x, church_y;
    sim_entity *entities;
    size_t count;
    size_t kind_count[KIND_COUNT];
    size_t highlights[SIM_MAX_HIGHLIGHTS]; /* entity indexes */
    size_t highlight_count;
    int ticks; /* the length of the run, which sets the phases */
    int tick;  /* the tick being played, 1 .. ticks; 0 before the first */
    sim_phase phase;
    int dusk;          /* 1 once dusk has shortened sight */
    sim_noise *noises; /* every stimulus of the run, in order */
    size_t noise_count, noise_cap;
    uint64_t seed;
    uint64_t rng;
    /* Calls made and the time they took, per operation. */
    unsigned long long op_calls[OP_COUNT];
    double op_seconds[OP_COUNT];
    int timing; /* measure each call (0: count only) */
    /* Runs after each call, outside its timing (NULL: nothing). */
    void (*after_call)(void *user, const sim_call *call);
    void *after_call_user;
    /* The first failed call, for the tool's message. */
    char error[256];
} sim_scene;

/*
 * Lays out `count` creatures for a run of `ticks` ticks from `seed` and adds
 * them to `world`. `after_call` (may be NULL) is called with `user` and the
 * call after every library call that succeeded, outside its timing: the
 * tool writes the call to its trace there. Returns 0, or -1 with
 * scene->error set (the scene must still be freed with sim_scene_free()).
 */
int sim_scene_init(sim_scene *scene, percept_world *world, size_t count, int ticks, uint64_t seed,
                   int timing, void (*after_call)(void *user, const sim_call *call), void *user);

/* Plays one tick: phase changes, everyone moves, then the noises. 0, or -1 with scene->error. */
int sim_scene_step(sim_scene *scene);

void sim_scene_free(sim_scene *scene);

/* The percept ID of entity `index`, and back (SIZE_MAX for an ID not in the scene). */
static inline percept_id sim_id(size_t index)
{
    return (percept_id)(index + 1);
}

static inline size_t sim_index(const sim_scene *scene, percept_id id)
{
    return id >= 1 && (size_t)id <= scene->count ? (size_t)id - 1 : SIZE_MAX;
}

/*
 * How far entity `index` reaches by `sense` on the ground, as the world
 * holds it now: the radius of its range's sphere where it meets the ground
 * (0 when it lacks the sense). For a cone, *angle is the facing's angle
 * and *half half the cone's, in radians; else *half is 0.
 */
double sim_reach(const sim_scene *scene, size_t index, percept_sense sense, double *angle,
                 double *half);

/* A kind's senses in words, for the legends: "sight 80 in a 120° cone, hearing 18". */
void sim_profile_text(const sim_profile *profile, char *buf, size_t size);

/*
 * The IDs that entity `index` perceives by `sense`, in ascending order, read
 * from the world with percept_perceived() into *buf (grown as needed).
 * Returns the count, or (size_t)-1 when out of memory or on a failed call.
 */
size_t sim_perceived(const sim_scene *scene, size_t index, percept_sense sense, percept_id **buf,
                     size_t *cap);

#endif /* PERCEPT_SIM_SCENE_H */
