/*
 * fuzz_common.h - what the libFuzzer targets in fuzz/ share: finding the
 * build tree's backend plugins and keeping them loaded for the whole run.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>

#define FUZZ_MAX_BACKENDS 16

/*
 * Sets PERCEPT_PLUGIN_PATH to the build tree's plugin directory when it is
 * unset, finds every NAME.so in the first directory of that path, and
 * dlopens each once more so that it stays mapped for the whole run.
 *
 * Why: libFuzzer keeps pointers to the coverage counters of every
 * instrumented module it has seen; a plugin that the library dlcloses at
 * the end of each world would unmap them (and be registered again on the
 * next load). With our own reference held, the library's dlopen/dlclose
 * only count references. Returns the number of backends found (sorted by
 * name, bruteforce first when present); aborts when there is none.
 */
size_t fuzz_load_backends(void);

/* The name of backend i (0 .. fuzz_load_backends() - 1). */
const char *fuzz_backend_name(size_t i);

/* Prints a message to stderr and aborts, so that libFuzzer records the input. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* FUZZ_COMMON_H */
