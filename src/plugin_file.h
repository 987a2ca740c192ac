/*
 * plugin_file.h - what a plugin file is, in words an operator can act on:
 * checked before dlopen() is asked to load it (a file cut short would kill
 * the process inside dlopen(), one built for another processor gets a
 * misleading message there), and a hint chosen from dlopen()'s words when
 * it refuses one. The library's loader uses it, and so does
 * percept-plugin-check, which loads plugins itself.
 */
#ifndef PERCEPT_PLUGIN_FILE_H
#define PERCEPT_PLUGIN_FILE_H

#include <stddef.h>

/* What `path`, which exists, is when it is not a file a plugin can be in
 * ("a directory", "a symbolic link to nothing"), written to `out`; 0 if it
 * is one. */
int plugin_file_odd(const char *path, char *out, size_t size);

/*
 * 0 when the plugin file at `path` may be given to dlopen(): an ELF file of
 * this build's class and byte order, for this processor, holding what its
 * headers promise, or any other file (dlopen() then says what it is). -1
 * otherwise, with a message starting with the path in `why`.
 */
int plugin_file_check(const char *path, char *why, size_t size);

/*
 * plugin_file_check(), then dlopen(path, RTLD_NOW | RTLD_LOCAL): the handle,
 * or NULL with "PATH: ..." in `why` (dlopen()'s words and a hint when it is
 * the loader that refuses).
 */
void *plugin_file_open(const char *path, char *why, size_t size);

/* dlerror()'s text `e` without the plugin's path where it starts with it. */
const char *plugin_file_without_path(const char *e, const char *path);

/* What to check after dlopen() refused the plugin at `path` with dlerror()
 * text `e` (NULL: ""): ". " and a sentence, to append to the message. */
const char *plugin_file_dlopen_hint(const char *e, const char *path);

#endif
