/*
 * plugin_env_probe.c - opens a world with the backend named on the command
 * line and prints the file it was loaded from, or the error. setid-env.test
 * runs it as a set-group-ID program to check that PERCEPT_PLUGIN_PATH is
 * not trusted there. Linked with -no-install, so that it finds the library
 * of the build tree without LD_LIBRARY_PATH (ignored in set-ID programs).
 */
#include <stdio.h>
#include <unistd.h>

#include "percept.h"

/* LeakSanitizer cannot stop a set-ID process to scan it and would fail it
 * at exit, in a sanitizer build; and a set-ID process ignores the options
 * from the environment. Leaks are the other suites' business. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: plugin_env_probe BACKEND\n");
        return 2;
    }
    /* Whether the group bit took effect: not on a file system mounted nosuid. */
    printf("set-ID: %s\n", getegid() != getgid() ? "yes" : "no");
    percept_world *world = NULL;
    percept_options options = PERCEPT_OPTIONS_INIT;
    percept_error error;
    options.backend = argv[1];
    if (percept_world_open_string(&world, "", "<probe>", &options, &error) != PERCEPT_OK) {
        printf("error: %s\n", error.text);
        return 1;
    }
    printf("loaded: %s\n", percept_backend_path(world, PERCEPT_SIGHT));
    percept_world_close(world);
    return 0;
}
