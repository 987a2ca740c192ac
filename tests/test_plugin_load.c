/*
 * test_plugin_load.c - loading backend plugins: each deliberately broken test
 * plugin (tests/plugins/broken.c) and each file that is no plugin is refused
 * with PERCEPT_EPLUGIN and a message naming its path, without a crash and
 * without falling back to another copy; a plugin's refusals of its
 * parameters and of its setup name the line, section and key at fault.
 */
#include "testutil.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h> /* ElfW(): to find where a plugin's segments end */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME "test.ini"
#define BF "[percept]\nbackend = bruteforce\n"

/* The build tree's test plugins (from the harness), or NULL: then the tests skip. */
static const char *plugin_dir;

/* A scratch plugin directory for files that are no plugins. */
static char tmp_dir[] = "/tmp/percept-plg-XXXXXX";

static void plugin_path(char *buf, size_t size, const char *dir, const char *name)
{
    assert_true((size_t)snprintf(buf, size, "%s/%s.so", dir, name) < size);
}

/* The C library's allocator, refusing anything above 1 GiB: a request a test
 * plugin makes to be refused, without relying on malloc() failing (a
 * sanitizer's would abort instead). */
static void *capped_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return size > ((size_t)1 << 30) ? NULL : realloc(ptr, size);
}

/* Opens `text` with plugins searched first in `dir` (options.backend `backend`
 * if not NULL); it must fail with `status`, leaving no world. */
static void open_fails(const char *text, const char *dir, const char *backend, int status,
                       percept_error *error)
{
    static const percept_allocator capped = {capped_alloc, NULL};
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    options.backend = backend;
    options.allocator = &capped;
    percept_world *world = (percept_world *)&world; /* not NULL: the call must clear it */
    int got = percept_world_open_string(&world, text, NAME, &options, error);
    if (got != status)
        fail_msg("status %s, expected %s: %s", percept_status_name(got),
                 percept_status_name(status), got ? error->text : "(opened)");
    assert_null(world);
    assert_int_equal(error->status, status);
}

/* The message names `path`, where the user can look. */
static void expect_path(const percept_error *error, const char *path)
{
    if (strstr(error->text, path) == NULL)
        fail_msg("the message does not name %s: %s", path, error->text);
}

static void expect_place(const percept_error *error, int line, const char *section, const char *key)
{
    if (error->line != line || strcmp(error->section, section) || strcmp(error->key, key))
        fail_msg("line %d, [%s], key '%s'; expected line %d, [%s], key '%s': %s", error->line,
                 error->section, error->key, line, section, key, error->text);
}

/* A world from `ini` whose plugins are searched first in `dir`; it must open. */
static percept_world *open_with_plugin_dir(const char *ini, const char *dir)
{
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    percept_world *world = NULL;
    percept_error error;
    if (percept_world_open_string(&world, ini, NAME, &options, &error) != PERCEPT_OK)
        fail_msg("%s", error.text);
    return world;
}

/* A world with `name` for sight must work: 1 sees 2 at 5, not at 5.5. */
static void expect_sight_works(percept_world *world)
{
    percept_entity_desc a = tu_desc(0, 0, 5, 0, 0, 0), b = tu_desc(3, 4, 0, 0, 0, 0);
    assert_int_equal(percept_add(world, 1, &a), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &b), PERCEPT_OK);
    assert_int_equal(percept_perceives(world, 1, 2, PERCEPT_SIGHT), 1);
    assert_int_equal(percept_move(world, 2, 3.0, 4.5), PERCEPT_OK);
    assert_int_equal(percept_perceives(world, 1, 2, PERCEPT_SIGHT), 0);
}

/* ------------------------------------------------------------------------ */
/* The test plugins                                                          */

/* Control: the working test plugin loads from the same directory. */
static void test_working_plugin_loads(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_world *world =
        open_with_plugin_dir(BF "[sight]\nbackend = badparam\nlevel = 3\n", plugin_dir);
    assert_string_equal(percept_backend_name(world, PERCEPT_SIGHT), "badparam");
    expect_sight_works(world);
    percept_world_close(world);
}

/*
 * A plugin whose table ends at query, as an older minor ABI's did, loads
 * and serves every sense exactly; the host reads nothing past its
 * struct_size (AddressSanitizer would report the read in the sanitizer run).
 */
static void test_older_minor_abi_plugin_works(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_world *w = open_with_plugin_dir("[percept]\nbackend = minimal\nmove_events = off\n"
                                            "[world]\nmax_x = 100\nmax_y = 100\n",
                                            plugin_dir);
    tu_recorder rec;
    model m;
    tu_recorder_init(&rec);
    model_init(&m, 0);
    assert_int_equal(percept_set_event_callback(w, tu_record, &rec), PERCEPT_OK);
    const tu_op ops[] = {
        {.kind = TU_ADD, .id = 1, .desc = tu_desc(10, 10, 5, 5, 5, 0)},
        {.kind = TU_ADD, .id = 2, .desc = tu_desc(13, 14, 1, 0, 0, 0)},
        {.kind = TU_MOVE, .id = 2, .x = 13, .y = 14.5},
        {.kind = TU_MOVE, .id = 2, .x = 13, .y = 14},
        {.kind = TU_MOVE, .id = 2, .x = 10.5, .y = 10},
    };
    for (size_t i = 0; i < COUNT_OF(ops); i++)
        tu_call(w, &rec, &m, &ops[i], "minimal");
    tu_expect_world(&m, w, "minimal");
    /* Its table has no memory_usage: its index counts as nothing, the rest as usual. */
    percept_memory mem;
    assert_int_equal(percept_memory_usage(w, &mem), PERCEPT_OK);
    assert_int_equal(mem.backends, 0);
    assert_true(mem.entities > 0 && mem.pairs > 0 && mem.total > mem.entities + mem.pairs);
    percept_world_close(w);
    tu_recorder_free(&rec);
    model_free(&m);
}

/*
 * Each broken plugin (tests/plugins/broken.c), for [sight], for every sense,
 * and through options.backend: refused, naming its path, and again the same
 * way (a failed load leaves nothing behind).
 */
static void test_broken_plugins(void **state)
{
    (void)state;
    static const char *const names[] = {"noentry", "undefsym", "badabi",    "abi10",
                                        "noquery", "nullops",  "wrongname", "smallsize"};
    if (plugin_dir == NULL)
        skip();
    for (size_t i = 0; i < COUNT_OF(names); i++) {
        char text[256], path[1024];
        percept_error error, again;
        plugin_path(path, sizeof path, plugin_dir, names[i]);
        snprintf(text, sizeof text, BF "[sight]\nbackend = %s\n", names[i]);
        open_fails(text, plugin_dir, NULL, PERCEPT_EPLUGIN, &error);
        expect_path(&error, path);
        expect_place(&error, 4, "sight", "backend");
        /* An old plugin's refusal names its ABI (beside this library's). */
        if (!strcmp(names[i], "abi10"))
            assert_non_null(strstr(error.text, "ABI 1.0"));
        open_fails(text, plugin_dir, NULL, PERCEPT_EPLUGIN, &again);
        assert_string_equal(error.text, again.text);
        snprintf(text, sizeof text, "[percept]\nbackend = %s\n", names[i]);
        open_fails(text, plugin_dir, NULL, PERCEPT_EPLUGIN, &error);
        expect_path(&error, path);
        open_fails(BF, plugin_dir, names[i], PERCEPT_EPLUGIN, &error);
        expect_path(&error, path);
    }
}

/*
 * A plugin's own parameter checks: a value it refuses and a key it does not
 * know are the key's fault, and so is a key it blames without a reason; a
 * parameter index it was never given is the plugin's bug, blamed on the line
 * that chose it. The host's own key is taken out before the plugin sees the rest.
 */
static void test_parameters_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *section, *key;
        int status;
    } cases[] = {
        {BF "\n[sight]\nbackend = badparam\nobserver_cell_size = 8\nlevel = 9\n", 7, "sight",
         "level", PERCEPT_ECONFIG},
        {"[percept]\nbackend = badparam\n[hearing]\nlevel = 2\nobserver_cell_size = 8\nlevle = 2\n",
         6, "hearing", "levle", PERCEPT_ECONFIG},
        {BF "[sight]\nbackend = badparam\nmute = 1\n", 5, "sight", "mute", PERCEPT_ECONFIG},
        {BF "[sight]\nbackend = badparam\nmisreport = 1\n", 4, "sight", "backend", PERCEPT_EPLUGIN},
    };
    if (plugin_dir == NULL)
        skip();
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        percept_error error;
        open_fails(cases[i].text, plugin_dir, NULL, cases[i].status, &error);
        expect_place(&error, cases[i].line, cases[i].section, cases[i].key);
    }
}

/*
 * create() failing without a parameter to blame: a setup refused with a
 * reason is the configuration's fault (ECONFIG), a refusal without one the
 * plugin's (EPLUGIN), one after the host's allocator refused a block is out
 * of memory (ENOMEM). Each on the 'backend' key that chose the backend, the
 * first of the sections sharing it.
 */
static void test_create_refused(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        int status;
    } cases[] = {
        {"whole", PERCEPT_ECONFIG}, {"silent", PERCEPT_EPLUGIN}, {"hungry", PERCEPT_ENOMEM}};
    if (plugin_dir == NULL)
        skip();
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        char text[256];
        percept_error error;
        snprintf(text, sizeof text, BF "[smell]\nbackend = badparam\n%s = 1\n", cases[i].key);
        open_fails(text, plugin_dir, NULL, cases[i].status, &error);
        expect_place(&error, 4, "smell", "backend");
        snprintf(text, sizeof text,
                 BF "[sight]\nbackend = badparam\n%s = 1\n[hearing]\n"
                    "backend = badparam\n%s = 1\n",
                 cases[i].key, cases[i].key);
        open_fails(text, plugin_dir, NULL, cases[i].status, &error);
        expect_place(&error, 4, "sight", "backend");
    }
}

/* A backend whose reserve() refuses: ENOMEM, and the world unchanged. */
static void test_reserve_refused(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_world *w =
        open_with_plugin_dir(BF "[sight]\nbackend = badparam\ncrowded = 1\n", plugin_dir);
    percept_entity_desc d = tu_desc(0, 0, 5, 5, 5, 0);
    assert_int_equal(percept_add(w, 1, &d), PERCEPT_OK);
    d.x = 1;
    assert_int_equal(percept_add(w, 2, &d), PERCEPT_ENOMEM);
    assert_true(percept_errmsg(w)[0] != '\0');
    assert_int_equal(percept_entity_count(w), 1);
    assert_int_equal(percept_contains(w, 2), 0);
    percept_world_close(w);
}

/* ------------------------------------------------------------------------ */
/* Files that are no plugins                                                 */

/* tmp_dir/NAME.so holding `length` bytes of `bytes`. */
static void write_copy(const char *name, const void *bytes, size_t length, char *path, size_t size)
{
    plugin_path(path, size, tmp_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, length, f), length);
    assert_int_equal(fclose(f), 0);
}

/* [sight] served from tmp_dir/NAME.so is refused, naming it, and nothing is loaded. */
static void expect_refused_file(const char *name, const char *path)
{
    char text[256];
    percept_error error;
    snprintf(text, sizeof text, BF "[sight]\nbackend = %s\n", name);
    open_fails(text, tmp_dir, NULL, PERCEPT_EPLUGIN, &error);
    expect_path(&error, path);
#ifdef RTLD_NOLOAD
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return; /* asking dlopen() would open a FIFO, and wait */
    void *loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (loaded != NULL)
        dlclose(loaded);
    assert_null(loaded);
#endif
}

/* tmp_dir/badparam.so loads and serves [sight]. */
static void expect_loads(const char *path)
{
    percept_world *world = open_with_plugin_dir(BF "[sight]\nbackend = badparam\n", tmp_dir);
    assert_string_equal(percept_backend_path(world, PERCEPT_SIGHT), path);
    expect_sight_works(world);
    percept_world_close(world);
}

/*
 * A text file, and a broken bruteforce.so found first: refused, never left
 * for a good copy further down the search path; nor when the first
 * bruteforce.so is no file at all.
 */
static void test_no_plugin_no_fallback(void **state)
{
    (void)state;
    static const char garbage[] = "this is a text file, not a shared object\n";
    char path[1024];
    write_copy("garbage", garbage, sizeof garbage - 1, path, sizeof path);
    expect_refused_file("garbage", path);
    unlink(path);
    write_copy("bruteforce", garbage, sizeof garbage - 1, path, sizeof path);
    expect_refused_file("bruteforce", path);
    unlink(path);
    assert_int_equal(mkdir(path, 0755), 0);
    expect_refused_file("bruteforce", path);
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(symlink("/nonexistent/percept/bruteforce.so", path), 0);
    expect_refused_file("bruteforce", path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(path, path), 0); /* a link to itself */
    expect_refused_file("bruteforce", path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(20); /* a loader that opened it to read would wait here for ever */
    expect_refused_file("bruteforce", path);
    alarm(0);
    assert_int_equal(unlink(path), 0);
}

/* A working plugin's bytes, and where its headers and segments end. */
typedef struct plugin_image {
    unsigned char *bytes;
    size_t size;
    size_t headers_end; /* the end of its program header table */
    size_t loaded_end;  /* the end of its last loaded segment's bytes in the file */
} plugin_image;

static void read_image(plugin_image *img)
{
    char path[1024];
    struct stat st;
    if (plugin_dir == NULL)
        skip();
    plugin_path(path, sizeof path, plugin_dir, "badparam");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fstat(fileno(f), &st), 0);
    img->size = (size_t)st.st_size;
    img->bytes = malloc(img->size);
    assert_non_null(img->bytes);
    assert_int_equal(fread(img->bytes, 1, img->size, f), img->size);
    fclose(f);
    ElfW(Ehdr) eh;
    memcpy(&eh, img->bytes, sizeof eh);
    img->headers_end = (size_t)eh.e_phoff + (size_t)eh.e_phnum * sizeof(ElfW(Phdr));
    img->loaded_end = 0;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        memcpy(&ph, img->bytes + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD && (size_t)(ph.p_offset + ph.p_filesz) > img->loaded_end)
            img->loaded_end = (size_t)(ph.p_offset + ph.p_filesz);
    }
    assert_true(img->headers_end < img->loaded_end && img->loaded_end <= img->size);
}

/*
 * A plugin cut short (an interrupted copy or install), at each kind of
 * place: glibc's dlopen() maps the missing bytes and dies of SIGBUS, so the
 * host must refuse the file first, in this very process. The whole copy,
 * and one that ends where its last segment's bytes do, still load.
 */
static void test_truncated_plugin(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    const size_t cuts[] = {20,
                           sizeof(ElfW(Ehdr)),
                           sizeof(ElfW(Ehdr)) + 1,
                           img.headers_end - 1,
                           img.headers_end,
                           img.headers_end + 1,
                           img.loaded_end / 2,
                           img.loaded_end - 4096 - 1,
                           img.loaded_end - 1};
    char path[1024];
    for (size_t i = 0; i < COUNT_OF(cuts); i++) {
        write_copy("badparam", img.bytes, cuts[i], path, sizeof path);
        expect_refused_file("badparam", path);
    }
    /* Without its section headers, so that the copy does not point past its end. */
    ElfW(Ehdr) eh, bare;
    memcpy(&eh, img.bytes, sizeof eh);
    bare = eh;
    bare.e_shoff = 0;
    bare.e_shnum = 0;
    bare.e_shstrndx = SHN_UNDEF;
    memcpy(img.bytes, &bare, sizeof bare);
    write_copy("badparam", img.bytes, img.loaded_end, path, sizeof path);
    expect_loads(path);
    memcpy(img.bytes, &eh, sizeof eh);
    write_copy("badparam", img.bytes, img.size, path, sizeof path);
    expect_loads(path);
    unlink(path);
    free(img.bytes);
}

/*
 * ELF files that no plugin of this build can be: program headers no file
 * could hold, another class or byte order, another processor, an object
 * file and a program (this test itself). Each refused, never a crash.
 */
static void test_other_elf_files(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    ElfW(Ehdr) eh, odd;
    memcpy(&eh, img.bytes, sizeof eh);
    char path[1024];
    for (int k = 0; k < 7; k++) {
        odd = eh;
        switch (k) {
        case 0: /* a program header size that is not this machine's */
            odd.e_phentsize = (ElfW(Half))(sizeof(ElfW(Phdr)) + 8);
            break;
        case 1: /* a table whose offset wraps around */
            odd.e_phoff = (ElfW(Off)) - 8;
            break;
        case 2:
            odd.e_ident[EI_CLASS] = eh.e_ident[EI_CLASS] == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64;
            break;
        case 3:
            odd.e_ident[EI_DATA] = eh.e_ident[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
            break;
        case 4:
            odd.e_machine = eh.e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
            break;
        case 5:
            odd.e_type = ET_REL;
            break;
        default:
            odd.e_type = ET_EXEC;
            break;
        }
        memcpy(img.bytes, &odd, sizeof odd);
        write_copy("badparam", img.bytes, img.size, path, sizeof path);
        expect_refused_file("badparam", path);
    }
    memcpy(img.bytes, &eh, sizeof eh);
    /* A loaded segment past the end of any file: its end wraps around. */
    for (size_t i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph, far;
        unsigned char *at = img.bytes + eh.e_phoff + i * sizeof ph;
        memcpy(&ph, at, sizeof ph);
        if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
            continue;
        far = ph;
        far.p_offset = (ElfW(Off)) - 8;
        memcpy(at, &far, sizeof far);
        write_copy("badparam", img.bytes, img.size, path, sizeof path);
        expect_refused_file("badparam", path);
        memcpy(at, &ph, sizeof ph);
        break;
    }
    write_copy("badparam", img.bytes, img.size, path, sizeof path); /* restored: it loads */
    expect_loads(path);
    free(img.bytes);
    /* This program, PIE or not: glibc refuses either to dlopen(). */
    FILE *self = fopen("/proc/self/exe", "rb");
    if (self == NULL)
        return; /* no /proc: the copies above stand for it */
    img.bytes = malloc(1 << 24);
    assert_non_null(img.bytes);
    img.size = fread(img.bytes, 1, 1 << 24, self);
    fclose(self);
    write_copy("badparam", img.bytes, img.size, path, sizeof path);
    expect_refused_file("badparam", path);
    unlink(path);
    free(img.bytes);
}

/*
 * A program header table longer than the few headers a reader may take at a
 * time: 16 empty entries, then the plugin's own, moved to the end of the
 * file. It loads as it is; when its last loaded segment promises a page and
 * a byte more than the file holds, it is refused like a file cut short.
 */
static void test_long_program_header_table(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    ElfW(Ehdr) eh;
    memcpy(&eh, img.bytes, sizeof eh);
    size_t at = (img.size + 7) & ~(size_t)7, count = 16 + (size_t)eh.e_phnum;
    size_t size = at + count * sizeof(ElfW(Phdr));
    unsigned char *bytes = calloc(size, 1); /* zeros: PT_NULL entries */
    assert_non_null(bytes);
    memcpy(bytes, img.bytes, img.size);
    memcpy(bytes + at + 16 * sizeof(ElfW(Phdr)), img.bytes + eh.e_phoff,
           eh.e_phnum * sizeof(ElfW(Phdr)));
    eh.e_phoff = (ElfW(Off))at;
    eh.e_phnum = (ElfW(Half))count;
    memcpy(bytes, &eh, sizeof eh);
    char path[1024];
    write_copy("badparam", bytes, size, path, sizeof path);
    expect_loads(path);
    size_t last = count;
    ElfW(Phdr) ph;
    for (size_t i = 0; i < count; i++) {
        memcpy(&ph, bytes + at + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD)
            last = i;
    }
    assert_true(last >= 16 && last < count);
    memcpy(&ph, bytes + at + last * sizeof ph, sizeof ph);
    size_t more = size - (size_t)(ph.p_offset + ph.p_filesz) + 4097;
    ph.p_filesz += more;
    ph.p_memsz += more;
    memcpy(bytes + at + last * sizeof ph, &ph, sizeof ph);
    write_copy("badparam", bytes, size, path, sizeof path);
    expect_refused_file("badparam", path);
    unlink(path);
    free(bytes);
    free(img.bytes);
}

/* ------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    plugin_dir = getenv("PERCEPT_TEST_PLUGIN_DIR");
    return mkdtemp(tmp_dir) != NULL ? 0 : -1;
}

/* Empty and remove tmp_dir, even after a failed test left files behind. */
static int teardown(void **state)
{
    (void)state;
    DIR *dir = opendir(tmp_dir);
    if (dir != NULL) {
        struct dirent *e;
        char path[sizeof tmp_dir + 256 + 2];
        while ((e = readdir(dir)) != NULL) {
            snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
            if (e->d_name[0] != '.' && unlink(path) != 0)
                rmdir(path); /* a test's directory named like a plugin */
        }
        closedir(dir);
    }
    return rmdir(tmp_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_working_plugin_loads),
        cmocka_unit_test(test_older_minor_abi_plugin_works),
        cmocka_unit_test(test_broken_plugins),
        cmocka_unit_test(test_parameters_refused),
        cmocka_unit_test(test_create_refused),
        cmocka_unit_test(test_reserve_refused),
        cmocka_unit_test(test_no_plugin_no_fallback),
        cmocka_unit_test(test_truncated_plugin),
        cmocka_unit_test(test_other_elf_files),
        cmocka_unit_test(test_long_program_header_table),
    };
    /* The plain test driver reads any nonzero status as failure, and 77 as a skip. */
    if (cmocka_run_group_tests(tests, setup, teardown) != 0)
        return 1;
    /* Without the test plugins most of this suite did not run: say so rather than pass. */
    return plugin_dir != NULL ? 0 : 77;
}
