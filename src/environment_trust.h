/*
 * environment_trust.h - whether this process may take code to load from its
 * environment (PERCEPT_PLUGIN_PATH). The library's plugin search asks, and
 * so does percept-bench, which lists the plugins the library would load and
 * compiles this same file so that the two cannot disagree.
 */
#ifndef PERCEPT_ENVIRONMENT_TRUST_H
#define PERCEPT_ENVIRONMENT_TRUST_H

/*
 * 1 unless this is a set-user-ID or set-group-ID program (or one the kernel
 * marks secure, e.g. for file capabilities), whose caller's environment is
 * not to be trusted with its privileges. The dynamic linker ignores
 * LD_LIBRARY_PATH there for the same reason.
 */
int environment_trusted(void);

#endif
