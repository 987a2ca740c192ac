/*
 * crashy.c - broken test backend: a sound table, but its query kills the
 * process, so percept-plugin-check must report each check it crashes in,
 * by name and signal, and go on with the next. It traps (SIGILL) rather
 * than dereference a null pointer: the sanitizer build would catch a
 * SIGSEGV itself and exit instead of dying by the signal. With CRASHY_LOOP
 * set in the environment the query never returns instead, for --timeout
 * (with SIGALRM blocked, so that an alarm in the process cannot end it);
 * with CRASHY_EXIT it ends the process with status 0, which must not pass.
 * CRASHY_ENTRY=trap or CRASHY_ENTRY=loop make the entry function itself
 * trap or never return, for a plugin that breaks while it is loaded, and
 * CRASHY_ENTRY=print makes it print, which a plugin must not;
 * CRASHY_ENTRY=hints gives a table with query_hints bits no ABI defines.
 */
#include <percept/backend.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub_ops.h"

/* Never returns, with SIGALRM blocked: only the runner can stop it. */
static void loop_forever(void)
{
    sigset_t alarm_set;
    sigemptyset(&alarm_set);
    sigaddset(&alarm_set, SIGALRM);
    sigprocmask(SIG_BLOCK, &alarm_set, NULL);
    for (volatile int forever = 1; forever;)
        continue;
}

static void crashy_query(const percept_backend *b, double x, double y, double r,
                         percept_backend_visit visit, void *ctx)
{
    (void)b;
    (void)x;
    (void)y;
    (void)r;
    (void)visit;
    (void)ctx;
    if (getenv("CRASHY_EXIT") != NULL)
        exit(0);
    if (getenv("CRASHY_LOOP") != NULL)
        loop_forever();
    __builtin_trap(); /* the fault */
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "crashy",
    .description = "test backend whose query crashes",
    .create = stub_create,
    .destroy = stub_destroy,
    .reserve = stub_reserve,
    .insert = stub_place,
    .update = stub_place,
    .remove = stub_remove,
    .query = crashy_query,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    const char *entry = getenv("CRASHY_ENTRY");
    if (entry != NULL && strcmp(entry, "loop") == 0)
        loop_forever();
    if (entry != NULL && strcmp(entry, "trap") == 0)
        __builtin_trap();
    if (entry != NULL && strcmp(entry, "print") == 0)
        printf("crashy was here\n");
    if (entry != NULL && strcmp(entry, "hints") == 0) {
        static percept_backend_ops hinted;
        hinted = ops;
        hinted.query_hints = 0x6; /* bits ABI 1.1 does not define */
        return &hinted;
    }
    return &ops;
}
