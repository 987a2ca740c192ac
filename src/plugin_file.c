/*
 * plugin_file.c - what a plugin file is, told before dlopen() is asked to
 * load it and after it refuses (see plugin_file.h).
 */
#include "plugin_file.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h> /* ElfW(): the ELF types of this build's class */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_machine.h"

/* dlerror()'s text `e` without the plugin's path where it starts with it
 * ("PATH: undefined symbol: x", glibc's form): the message names the path
 * already, and saying it twice could push the hint past the 511 bytes kept. */
const char *plugin_file_without_path(const char *e, const char *path)
{
    size_t len = strlen(path);
    if (strncmp(e, path, len) == 0 && e[len] == ':' && e[len + 1] == ' ')
        return e + len + 2;
    return e;
}

/* What to check for a dlopen() failure of the plugin at `path`, from the
 * loader's wording (glibc's and musl's). */
const char *plugin_file_dlopen_hint(const char *e, const char *path)
{
    if (!e)
        return "";
    size_t len = strlen(path);
    /* The plugin file itself: glibc starts with its path, musl names it after
     * "Error loading shared library". */
    int itself = (strncmp(e, path, len) == 0 && e[len] == ':') ||
                 (strstr(e, path) != NULL && strstr(e, "(needed by") == NULL);
    if (strstr(e, "Permission denied"))
        return ". Check that the file is readable by this process";
    if (strstr(e, "invalid ELF header") || strstr(e, "file too short") ||
        strstr(e, "wrong ELF class") || strstr(e, "Exec format error"))
        return ". This is not a shared object for this machine: check it with file(1), and "
               "rebuild it as a module (libtool -module, or cc -shared -fPIC)";
    /* glibc's words for an object file, and for a program (PIE or not). */
    if (strstr(e, "only ET_DYN and ET_EXEC"))
        return ". This is an object file (cc -c), not a shared object: link it as a module "
               "(libtool -module, or cc -shared -fPIC)";
    if (strstr(e, "cannot dynamically load"))
        return ". This is a program, not a shared object: build the plugin as a module (libtool "
               "-module, or cc -shared -fPIC)";
    if (strstr(e, "undefined symbol") || strstr(e, "symbol not found"))
        return ". The plugin uses a symbol that nothing loaded defines: link it against the "
               "libraries it needs";
    if (!itself && (strstr(e, "cannot open shared object file") || strstr(e, "(needed by")))
        return ". A library the plugin needs is missing: list them with ldd(1)";
    return ". Check the file with file(1) and the libraries it needs with ldd(1)";
}

/* What `path`, which exists, is when it is not a file a plugin can be in,
 * written to `out`; 0 if it is one. */
int plugin_file_odd(const char *path, char *out, size_t size)
{
    struct stat st;
    if (stat(path, &st)) {
        int e = errno;
        if (e == ELOOP)
            snprintf(out, size, "a loop of symbolic links");
        else if (e == ENOENT || e == ENOTDIR)
            snprintf(out, size, "a symbolic link to nothing");
        else
            snprintf(out, size, "a symbolic link whose target cannot be reached (%s)", strerror(e));
        return 1;
    }
    if (S_ISREG(st.st_mode))
        return 0;
    snprintf(out, size, "%s", S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
    return 1;
}

/* The message for a plugin built for processor `machine`, not this one's. */
static void other_machine(const char *path, unsigned machine, char *why, size_t size)
{
    const char *name = elf_machine_name(machine), *ours = elf_machine_name(ELF_MACHINE_OURS);
    const char *unnamed = "a processor percept has no name for";
    snprintf(why, size,
             "%s: built for another processor: ELF machine %u, %s; this percept runs on ELF "
             "machine %u, %s. Build the plugin for this one (file(1) tells what a file is built "
             "for)",
             path, machine, name ? name : unnamed, (unsigned)ELF_MACHINE_OURS,
             ours ? ours : unnamed);
}

/*
 * Whether the plugin file at `path` is one dlopen() can be asked to load:
 *
 * - Built for this processor. An ELF file of this build's class and byte
 *   order but another machine gets glibc's "cannot open shared object file:
 *   No such file or directory", for a file that is there.
 * - Not cut short. glibc maps a plugin's loadable segments straight from
 *   the file and touches them, so a file cut short (an interrupted copy or
 *   install) kills the process with SIGBUS inside dlopen() instead of
 *   failing it.
 *
 * 0 when the file is for this machine and holds what its headers promise,
 * or is no ELF file of this build's class and byte order (dlopen() then
 * says what it is); -1 with the message in `why` otherwise. The headers are
 * read with pread(), since a mapping would fault the same way, a few
 * program headers at a time into the stack: nothing is allocated.
 */
int plugin_file_check(const char *path, char *why, size_t size)
{
    static const unsigned char ours[EI_DATA + 1] = {
        ELFMAG0,
        ELFMAG1,
        ELFMAG2,
        ELFMAG3,
        sizeof(ElfW(Ehdr)) == sizeof(Elf64_Ehdr) ? ELFCLASS64 : ELFCLASS32,
        __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB};
    /* O_NONBLOCK: a FIFO put in the file's place since stat() does not hang us. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0; /* dlopen() says why */
    struct stat st;
    ElfW(Ehdr) eh;
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, &eh, sizeof eh, 0) : -1;
    uintmax_t have = got < 0 ? 0 : (uintmax_t)st.st_size;
    uintmax_t table = got < (ssize_t)sizeof eh ? 0 : (uintmax_t)eh.e_phnum * sizeof(ElfW(Phdr));
    if (got < (ssize_t)sizeof ours || memcmp(eh.e_ident, ours, sizeof ours)) {
        close(fd);
        return 0; /* another kind of file, or unreadable: dlopen()'s to judge */
    }
    char says[128] = ""; /* what the headers promise, when the file lacks it */
    int corrupt = 0;
    if (ELF_MACHINE_OURS != EM_NONE &&
        (size_t)got >= offsetof(ElfW(Ehdr), e_machine) + sizeof eh.e_machine &&
        eh.e_machine != ELF_MACHINE_OURS) {
        close(fd);
        other_machine(path, eh.e_machine, why, size);
        return -1;
    }
    if ((size_t)got < sizeof eh) {
        snprintf(says, sizeof says, "an ELF header is %zu bytes", sizeof eh);
    } else if (eh.e_phnum > 0 && eh.e_phentsize != sizeof(ElfW(Phdr))) {
        corrupt = 1;
        snprintf(says, sizeof says,
                 "its ELF header says program headers are %u bytes each, not %zu",
                 (unsigned)eh.e_phentsize, sizeof(ElfW(Phdr)));
    } else if (eh.e_phoff > UINTMAX_MAX - table) {
        corrupt = 1;
        snprintf(says, sizeof says, "its ELF header puts the program headers at byte %ju",
                 (uintmax_t)eh.e_phoff);
    } else if (eh.e_phoff + table > have) {
        snprintf(says, sizeof says,
                 "its ELF header says %ju bytes (to the end of its program headers)",
                 (uintmax_t)eh.e_phoff + table);
    } else {
        /* The table is all there: each loaded segment's bytes must be too. */
        uintmax_t need = 0;
        ElfW(Phdr) ph[16];
        for (size_t i = 0, n = 0; i < eh.e_phnum && !corrupt; i += n) {
            n = eh.e_phnum - i < 16 ? eh.e_phnum - i : 16;
            if (pread(fd, ph, n * sizeof ph[0], (off_t)(eh.e_phoff + i * sizeof ph[0])) !=
                (ssize_t)(n * sizeof ph[0])) {
                need = 0; /* the file changed since fstat(): dlopen()'s to judge */
                break;
            }
            for (size_t k = 0; k < n && !corrupt; k++) {
                uintmax_t off = ph[k].p_offset, len = ph[k].p_filesz;
                if (ph[k].p_type != PT_LOAD || len == 0)
                    continue;
                if (off > UINTMAX_MAX - len) {
                    corrupt = 1;
                    snprintf(says, sizeof says, "its program header %zu puts %ju bytes at byte %ju",
                             i + k, len, off);
                } else if (off + len > need) {
                    need = off + len;
                }
            }
        }
        if (!corrupt && need > have)
            snprintf(says, sizeof says, "its program headers say %ju bytes", need);
    }
    close(fd);
    if (!*says)
        return 0;
    const char *again = ". Copy or build it again (an interrupted copy or install leaves a file "
                        "cut short)";
    if (corrupt)
        snprintf(why, size, "%s: file is truncated or corrupt: %s%s", path, says, again);
    else
        snprintf(why, size, "%s: file is truncated: %s, the file has %ju bytes%s", path, says, have,
                 again);
    return -1;
}

void *plugin_file_open(const char *path, char *why, size_t size)
{
    if (plugin_file_check(path, why, size))
        return NULL;
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror(); /* copied at once, before another dl call replaces it */
        snprintf(why, size, "%s: dlopen failed: %s%s", path,
                 e ? plugin_file_without_path(e, path) : "unknown error",
                 plugin_file_dlopen_hint(e, path));
    }
    return handle;
}
