/*
 * plugin.c - backend plugin discovery and loading. Each failing step has
 * its own message naming the file, because "backend failed" is useless to
 * an operator at 3 a.m.; dlerror()'s text is copied at once, before any
 * other dl call can replace it.
 */
#define _GNU_SOURCE /* secure_getenv() */
#include "plugin.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h> /* ElfW(): the ELF types of this build's class */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

#include "install_dirs.h" /* written by make: the configured paths */

static void add_dir(plugin_search *search, const char *dir)
{
    if (dir && *dir && search->count < sizeof search->dirs / sizeof search->dirs[0])
        search->dirs[search->count++] = dir;
}

int plugin_search_init(const percept_allocator *a, plugin_search *search, const char *option_dir,
                       const char *config_dir, char **env_copy)
{
    memset(search, 0, sizeof *search);
    *env_copy = NULL;
    add_dir(search, option_dir);
    add_dir(search, config_dir);
    /* NULL in a set-ID program: its caller's environment must not choose
     * the code it runs, as the dynamic linker ignores LD_LIBRARY_PATH there. */
    const char *env = secure_getenv("PERCEPT_PLUGIN_PATH");
    if (env && *env) {
        *env_copy = pc_strdup(a, env);
        if (!*env_copy)
            return -1;
        /* Room is kept for the installed directory, searched last. */
        for (char *save = NULL, *dir = strtok_r(*env_copy, ":", &save);
             dir && search->count + 1 < sizeof search->dirs / sizeof search->dirs[0];
             dir = strtok_r(NULL, ":", &save))
            add_dir(search, dir);
    }
    add_dir(search, PERCEPT_PLUGIN_DIR);
    return 0;
}

/*
 * Whether the ELF file at `path` holds fewer bytes than its loadable
 * segments need. glibc maps those straight from the file and touches them,
 * so a plugin cut short (an interrupted copy or install) would kill the
 * process with SIGBUS inside dlopen() instead of failing it. Any other
 * file is left to dlopen() to judge.
 */
static int cut_short(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    ElfW(Ehdr) eh;
    int short_file = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
        eh.e_phentsize == sizeof(ElfW(Phdr))) {
        uintmax_t size = (uintmax_t)st.st_size;
        for (unsigned i = 0; i < eh.e_phnum && !short_file; i++) {
            ElfW(Phdr) ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
                (ssize_t)sizeof ph)
                short_file = 1;
            else if (ph.p_type == PT_LOAD &&
                     ((uintmax_t)ph.p_offset > size || (uintmax_t)ph.p_filesz > size - ph.p_offset))
                short_file = 1;
        }
    }
    close(fd);
    return short_file;
}

/* Writes why a load failed to why[n]; returns PERCEPT_EPLUGIN. */
__attribute__((format(printf, 3, 4))) static int refuse(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return PERCEPT_EPLUGIN;
}

/* Checks the table in the order an incompatible plugin is most likely to fail. */
static int check_ops(const percept_backend_ops *ops, const char *name, const char *path, char *why,
                     size_t size)
{
    if (!ops)
        return refuse(why, size, "%s: %s() returned NULL", path, PERCEPT_BACKEND_ENTRY_SYMBOL);
    unsigned major = ops->abi_version >> 16, minor = ops->abi_version & 0xffffu;
    if (major != PERCEPT_BACKEND_ABI_MAJOR)
        return refuse(why, size,
                      "%s: built for backend ABI %u.%u, but this percept has ABI %d.%d: rebuild "
                      "it against this percept's <percept/backend.h>",
                      path, major, minor, PERCEPT_BACKEND_ABI_MAJOR, PERCEPT_BACKEND_ABI_MINOR);
    if (ops->struct_size < PERCEPT_BACKEND_OPS_MIN_SIZE)
        return refuse(why, size, "%s: the ops table is %u bytes, ABI %d needs at least %zu", path,
                      ops->struct_size, PERCEPT_BACKEND_ABI_MAJOR, PERCEPT_BACKEND_OPS_MIN_SIZE);
    const struct {
        const char *what;
        int present;
    } required[] = {
        {"name", ops->name != NULL},       {"create", ops->create != NULL},
        {"destroy", ops->destroy != NULL}, {"reserve", ops->reserve != NULL},
        {"insert", ops->insert != NULL},   {"update", ops->update != NULL},
        {"remove", ops->remove != NULL},   {"query", ops->query != NULL},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!required[i].present)
            return refuse(why, size, "%s: operation '%s' is NULL in the ops table", path,
                          required[i].what);
    if (strcmp(ops->name, name))
        return refuse(why, size, "%s: the plugin calls itself '%.64s', not '%s'", path, ops->name,
                      name);
    return PERCEPT_OK;
}

/* Where NAME.so was looked for, for the message that it is nowhere. */
static int not_found(const plugin_search *search, const char *name, char *why, size_t size)
{
    int n = snprintf(why, size, "no backend '%s': %s.so is in none of:", name, name);
    for (size_t i = 0; i < search->count && n > 0 && (size_t)n < size; i++)
        n += snprintf(why + n, size - (size_t)n, " %s", search->dirs[i]);
    return PERCEPT_EPLUGIN;
}

int plugin_load(const percept_allocator *a, const plugin_search *search, const char *name,
                plugin *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    int found = 0;
    struct stat st;
    for (size_t i = 0; i < search->count && !found; i++) {
        int n = snprintf(path, sizeof path, "%s/%s.so", search->dirs[i], name);
        found = n > 0 && (size_t)n < sizeof path && lstat(path, &st) == 0;
    }
    if (!found)
        return not_found(search, name, why, why_size);
    /* dlopen() would wait for ever on a FIFO in the plugin's place. */
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return refuse(why, why_size, "%s: not a regular file (or a link to none)", path);
    if (cut_short(path))
        return refuse(why, why_size, "%s: file is truncated: copy or build it again", path);
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        return refuse(why, why_size, "%s: dlopen failed: %s", path, e ? e : "unknown error");
    }
    void *sym = dlsym(handle, PERCEPT_BACKEND_ENTRY_SYMBOL);
    const char *e = dlerror();
    if (e || !sym) {
        refuse(why, why_size, "%s: not a percept backend plugin: %s", path,
               e ? e : "the entry symbol is NULL");
        dlclose(handle);
        return PERCEPT_EPLUGIN;
    }
    percept_backend_entry_fn entry;
    /* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
    memcpy(&entry, &sym, sizeof entry);
    const percept_backend_ops *ops = entry();
    if (check_ops(ops, name, path, why, why_size)) {
        dlclose(handle);
        return PERCEPT_EPLUGIN;
    }
    /* Copy only what the plugin's table has; later fields read as NULL. */
    size_t n = ops->struct_size < sizeof out->ops ? ops->struct_size : sizeof out->ops;
    memcpy(&out->ops, ops, n);
    out->path = pc_strdup(a, path);
    if (!out->path) {
        dlclose(handle);
        memset(out, 0, sizeof *out);
        snprintf(why, why_size, "out of memory loading %s", path);
        return PERCEPT_ENOMEM;
    }
    out->handle = handle;
    return PERCEPT_OK;
}

void plugin_unload(const percept_allocator *a, plugin *p)
{
    if (p->handle)
        dlclose(p->handle);
    pc_free(a, p->path);
    memset(p, 0, sizeof *p);
}
