/*
 * unused_params.c - the note of unused_params.h, from the config read again
 * with inih, as the library reads it.
 */
#include "unused_params.h"

#include <ini.h>
#include <string.h>

#include <percept.h>

/* What one section says: its backend and the keys handed to a backend. */
typedef struct section_keys {
    char backend[128];
    char keys[512]; /* "a, b, c" */
} section_keys;

typedef struct config_keys {
    section_keys percept;
    section_keys sense[PERCEPT_SENSE_COUNT];
} config_keys;

static void append_key(section_keys *s, const char *key)
{
    size_t len = strlen(s->keys);
    if (len + strlen(key) + 3 >= sizeof s->keys)
        return; /* a note, not a listing: the first keys say enough */
    if (len > 0)
        strcat(s->keys, ", ");
    strcat(s->keys, key);
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
    config_keys *c = user;
    section_keys *s = NULL;
    if (strcmp(section, "percept") == 0)
        s = &c->percept;
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
        if (strcmp(section, percept_sense_name((percept_sense)k)) == 0)
            s = &c->sense[k];
    if (s == NULL)
        return 1;
    if (strcmp(key, "backend") == 0) {
        snprintf(s->backend, sizeof s->backend, "%s", value);
    } else if (s != &c->percept && strcmp(key, "observer_cell_size") != 0) {
        append_key(s, key);
    }
    return 1;
}

void note_unused_params(FILE *out, const char *program, const char *config, const char *forced)
{
    config_keys c;
    memset(&c, 0, sizeof c);
    if (config == NULL || forced == NULL || ini_parse(config, on_key, &c) != 0)
        return;
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        const section_keys *s = &c.sense[k];
        const char *named = s->backend[0] ? s->backend : c.percept.backend;
        if (s->keys[0] == '\0' || named[0] == '\0' || strcmp(named, forced) == 0)
            continue;
        fprintf(out,
                "%s: note: --backend %s: [%s] tunes backend '%s'; its parameters there are not "
                "used: %s\n",
                program, forced, percept_sense_name((percept_sense)k), named, s->keys);
    }
}
