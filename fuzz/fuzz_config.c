/*
 * fuzz_config.c - libFuzzer target for the INI configuration: any text given
 * to percept_world_open_string() yields a world, or a clean error: a
 * negative status, the same in the error, no world, a message, and a line
 * within the text. A world that opens is given a small scene held to the
 * model of the relation (tests/model.h), so that fuzzed backend parameters
 * (cell sizes, bounds) and senses must still give exact answers.
 */
#include <percept.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_load_backends();
    return 0;
}

/* The scene: inside the default bounds, on their corners, and far outside. */
#define SCENE 6
static const double scene_x[SCENE] = {512, 512, 532.5, 0, 1024, -3e4};
static const double scene_y[SCENE] = {512, 522, 512, 0, 1024, 2048};
static const double scene_range[SCENE] = {5, 1, 0, 1e6, 3, 20};

/* Makes the same calls on w and on the model: the world must then hold what
 * the model does. The scene uses every sense the config names, and version
 * 2's fields: a height, a cone and a margin. */
static void run_scene(percept_world *w)
{
    model m;
    char why[512];
    const char *names[PERCEPT_MAX_SENSES];
    int st, senses = percept_sense_count(w);
    if (senses < 1 || senses > PERCEPT_MAX_SENSES)
        fuzz_fail("the world has %d senses", senses);
    for (int s = 0; s < senses; s++)
        if ((names[s] = percept_sense_name(w, s)) == NULL)
            fuzz_fail("sense %d of %d has no name", s, senses);
    model_init(&m, 0);
    model_set_senses(&m, senses, names);
    for (int i = 0; i < SCENE; i++) {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        d.x = scene_x[i];
        d.y = scene_y[i];
        d.z = i == 2 ? 3 : 0;
        d.facing[0] = 1;
        for (int s = 0; s < senses; s++)
            d.sense[s].range = scene_range[(i + s) % SCENE];
        d.sense[0].fov = i == 0 ? 90 : 0;
        d.sense[senses - 1].margin = i == 1 ? 4 : 0;
        d.hidden = i % 4 == 3 ? PERCEPT_SENSE_BIT(senses - 1) : 0;
        if ((st = percept_add(w, (percept_id)i + 1, &d)) != model_add(&m, (percept_id)i + 1, &d))
            fuzz_fail("scene: add %d returned %d: %s", i + 1, st, percept_errmsg(w));
    }
    /* A teleport, a walk, a rise and a range change: each backend's update path. */
    st = percept_move(w, 1, -1e5, scene_y[0]) | model_move(&m, 1, -1e5, scene_y[0]);
    st |= percept_move(w, 2, scene_x[1] + 3, scene_y[1]) |
          model_move(&m, 2, scene_x[1] + 3, scene_y[1]);
    st |= percept_move3(w, 3, scene_x[2], scene_y[2], 9) |
          model_move3(&m, 3, scene_x[2], scene_y[2], 9);
    st |= percept_set_range(w, 3, 0, 40) | model_set_range(&m, 3, 0, 40);
    if (st != 0)
        fuzz_fail("scene: a change failed: %s", percept_errmsg(w));
    if (!model_check_world(&m, w, why, sizeof why))
        fuzz_fail("scene (backend for %s: %s): %s", names[0], percept_backend_name(w, 0), why);
    model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sentinel;
    percept_world *w = (percept_world *)&sentinel; /* a failed open must set it to NULL */
    percept_error err;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int lines = 1;
    for (size_t i = 0; i < size && data[i] != '\0'; i++)
        lines += data[i] == '\n';
    memset(&err, 0x55, sizeof err);
    int st = percept_world_open_string(&w, text, "fuzz.ini", NULL, &err);
    free(text);

    if (st == 0) {
        if (w == NULL)
            fuzz_fail("percept_world_open_string returned 0 and no world");
        for (int s = 0; s < percept_sense_count(w); s++)
            if (percept_backend_name(w, (percept_sense)s) == NULL)
                fuzz_fail("the world has no backend for sense %d", s);
        run_scene(w);
        percept_world_close(w);
        return 0;
    }
    if (st >= 0 || st < PERCEPT_EIO || st == PERCEPT_EEXIST || st == PERCEPT_ENOENT ||
        st == PERCEPT_EBUSY)
        fuzz_fail("percept_world_open_string failed with status %d", st);
    if (w != NULL)
        fuzz_fail("a failed open (status %d) left *out = %p, not NULL", st, (void *)w);
    if (err.status != st)
        fuzz_fail("error.status %d differs from the returned status %d", err.status, st);
    if (memchr(err.text, '\0', sizeof err.text) == NULL || err.text[0] == '\0')
        fuzz_fail("error.text is empty or not NUL-terminated");
    if (memchr(err.section, '\0', sizeof err.section) == NULL ||
        memchr(err.key, '\0', sizeof err.key) == NULL)
        fuzz_fail("error.section or error.key is not NUL-terminated");
    if (err.line < 0 || err.line > lines)
        fuzz_fail("error.line %d is outside the text's %d lines: %s", err.line, lines, err.text);
    return 0;
}
