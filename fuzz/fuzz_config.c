/*
 * fuzz_config.c - libFuzzer target for the INI configuration: any text given
 * to percept_world_open_string() yields a world, or a clean error (negative
 * status, the same status in the error, a non-empty message, no world, and
 * structured fields that agree with the message).
 * A world that opens is then given a small fixed scene whose relation is
 * checked by brute force, so fuzzed backend parameters (cell sizes, bounds)
 * must still give exact answers.
 */
#include <percept.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "safe_text.h"

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

static void check_status(int st)
{
    switch (st) {
    case PERCEPT_EINVAL:
    case PERCEPT_ENOMEM:
    case PERCEPT_ECONFIG:
    case PERCEPT_EPLUGIN:
    case PERCEPT_EIO:
        return;
    default:
        fuzz_fail("percept_world_open_string failed with unexpected status %d", st);
    }
}

/* A char array of percept_error: NUL-terminated within its size. */
static void check_terminated(const char *name, const char *field, size_t size)
{
    if (memchr(field, '\0', size) == NULL)
        fuzz_fail("error.%s is not NUL-terminated", name);
}

/* Whether `name` is one of the senses' section names. */
static int is_sense(const char *name)
{
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (!strcmp(name, percept_sense_name((percept_sense)s)))
            return 1;
    return 0;
}

/* Whether the message may have filled its text: a character is written
 * whole or not at all, and one of four bytes shown escaped takes 16. */
static int full(const percept_error *err)
{
    return strlen(err->text) + 16 >= sizeof err->text;
}

/* Whether the message shows `shown`, or may have lost it: a message that
 * filled its text (a key of escapes, at four characters a byte, say) is cut
 * there, and the fields keep what it could not show. */
static int shows(const percept_error *err, const char *shown)
{
    return strstr(err->text, shown) != NULL || full(err);
}

/*
 * percept_error's fields for programs agree with its text, whatever the
 * input: each names what the message names and no more. Only what holds for
 * every message with these arguments (a short label, no options).
 */
static void check_error_fields(const percept_error *err)
{
    check_terminated("section", err->section, sizeof err->section);
    check_terminated("key", err->key, sizeof err->key);
    check_terminated("option", err->option, sizeof err->option);
    size_t len = strlen(err->text);
    if (err->reason < 0 || (size_t)err->reason > len)
        fuzz_fail("error.reason %d outside the message of %zu characters: %s", err->reason, len,
                  err->text);
    /* The place, when there is one, is the label's and ends in ": "; unless
     * it took the whole text (a byte shown as \xNN takes four), which then
     * leaves the reason no room. */
    int place_cut = (size_t)err->reason == len && full(err);
    if (err->reason > 0 &&
        (strncmp(err->text, "fuzz.ini", 8) != 0 ||
         (!place_cut && (err->reason < 2 || memcmp(err->text + err->reason - 2, ": ", 2) != 0))))
        fuzz_fail("error.reason %d does not follow a place \"fuzz.ini...: \": %s", err->reason,
                  err->text);
    if (err->senses & ~(unsigned)((1u << PERCEPT_SENSE_COUNT) - 1))
        fuzz_fail("error.senses 0x%x has bits beyond the senses: %s", err->senses, err->text);
    if (err->option[0] != '\0')
        fuzz_fail("error.option '%s' without options: %s", err->option, err->text);
    /* Nothing is named without a place to name it in. */
    if (err->reason == 0 && (err->section[0] || err->key[0] || err->senses))
        fuzz_fail("error names section '%s', key '%s', senses 0x%x, but no place: %s", err->section,
                  err->key, err->senses, err->text);
    /* The message names the section ("[NAME", its start if cut) and the
     * key, as it shows them (src/safe_text.h). */
    if (err->section[0]) {
        char bracketed[4 * sizeof err->section + 2] = "[";
        size_t at = 1;
        safe_text_put(bracketed, sizeof bracketed, &at, err->section);
        if (!shows(err, bracketed))
            fuzz_fail("error.section '%s' is not named in the message: %s", err->section,
                      err->text);
    }
    if (err->key[0]) {
        char shown[4 * sizeof err->key + 1];
        size_t at = 0;
        safe_text_put(shown, sizeof shown, &at, err->key);
        if (!shows(err, shown))
            fuzz_fail("error.key '%s' is not named in the message: %s", err->key, err->text);
    }
    /* A sense's section concerns that sense; only a backend named in
     * [percept] speaks for senses from elsewhere. */
    if (is_sense(err->section)) {
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            if (!strcmp(err->section, percept_sense_name((percept_sense)s)) &&
                !(err->senses & PERCEPT_SENSE_BIT(s)))
                fuzz_fail("error.section '%s' without its sense in senses 0x%x: %s", err->section,
                          err->senses, err->text);
    } else if (err->senses &&
               (strcmp(err->section, "percept") != 0 || strcmp(err->key, "backend") != 0)) {
        fuzz_fail("senses 0x%x for section '%s', key '%s': %s", err->senses, err->section, err->key,
                  err->text);
    }
}

/* Places the scene in w, changes it a little, and checks every pair by brute force. */
static void run_scene(percept_world *w)
{
    percept_entity_desc e[SCENE];
    percept_entity_desc got;
    int st;

    for (int i = 0; i < SCENE; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].x = scene_x[i];
        e[i].y = scene_y[i];
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            e[i].range[s] = scene_range[(i + s) % SCENE];
        e[i].hidden = (unsigned)(i % 4 == 3 ? PERCEPT_SENSE_BIT(PERCEPT_HEARING) : 0);
        st = percept_add(w, (percept_id)i + 1, &e[i]);
        if (st != 0)
            fuzz_fail("scene: add %d failed: %s", i + 1, percept_errmsg(w));
    }
    /* A teleport, a walk and a range change: each backend's update path. */
    e[0].x = -1e5;
    st = percept_move(w, 1, e[0].x, e[0].y);
    e[1].x += 3.0;
    st |= percept_move(w, 2, e[1].x, e[1].y);
    e[2].range[PERCEPT_SIGHT] = 40;
    st |= percept_set_range(w, 3, PERCEPT_SIGHT, 40);
    if (st != 0)
        fuzz_fail("scene: a change failed: %s", percept_errmsg(w));

    for (int o = 0; o < SCENE; o++) {
        if (percept_get_entity(w, (percept_id)o + 1, &got) != 0 || got.x != e[o].x ||
            got.y != e[o].y)
            fuzz_fail("scene: entity %d reads back wrong", o + 1);
        for (int t = 0; t < SCENE; t++) {
            for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
                double dx = e[t].x - e[o].x, dy = e[t].y - e[o].y, r = e[o].range[s];
                int want = o != t && r > 0 && !(e[t].hidden & PERCEPT_SENSE_BIT(s)) &&
                           dx * dx + dy * dy <= r * r;
                int have =
                    percept_perceives(w, (percept_id)o + 1, (percept_id)t + 1, (percept_sense)s);
                if (have != want)
                    fuzz_fail("scene: %d perceives %d by %s: %d, brute force says %d (backend "
                              "%s)",
                              o + 1, t + 1, percept_sense_name((percept_sense)s), have, want,
                              percept_backend_name(w, (percept_sense)s));
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sentinel;
    percept_world *w = (percept_world *)&sentinel; /* a failed open must set it to NULL */
    percept_error err;
    char *text = malloc(size + 1);
    int st;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    memset(&err, 0x55, sizeof err);
    st = percept_world_open_string(&w, text, "fuzz.ini", NULL, &err);
    free(text);

    if (st == 0) {
        if (w == NULL)
            fuzz_fail("percept_world_open_string returned 0 and no world");
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            if (percept_backend_name(w, (percept_sense)s) == NULL)
                fuzz_fail("the world has no backend for sense %d", s);
        run_scene(w);
        percept_world_close(w);
        return 0;
    }
    check_status(st);
    if (w != NULL)
        fuzz_fail("failed open (status %d) left *out = %p, not NULL", st, (void *)w);
    if (err.status != st)
        fuzz_fail("error.status %d differs from the returned status %d", err.status, st);
    if (memchr(err.text, '\0', sizeof err.text) == NULL)
        fuzz_fail("error.text is not NUL-terminated");
    if (err.line < 0)
        fuzz_fail("error.line %d is negative", err.line);
    if (err.text[0] == '\0')
        fuzz_fail("status %d (%s) with an empty error text", st, percept_status_name(st));
    check_error_fields(&err);
    return 0;
}
