/*
 * machine.c - what the benchmark ran on: CPU, cores, memory, kernel,
 * compiler and flags, and how loaded the machine was.
 */
#include "machine.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "replay.h"

#ifndef PERCEPT_BENCH_CFLAGS
#define PERCEPT_BENCH_CFLAGS "unknown"
#endif

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
}

/* The value of the first "KEY : value" line of a /proc file, trimmed. */
static int proc_field(const char *path, const char *key, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[512];
    size_t klen = strlen(key);
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        p[strcspn(p, "\n")] = '\0';
        copy(out, size, p);
        found = 1;
    }
    fclose(f);
    return found;
}

void bench_machine_load(double load[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    load[0] = load[1] = load[2] = -1;
    if (!f)
        return;
    if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
        load[0] = load[1] = load[2] = -1;
    fclose(f);
}

void bench_machine_probe(bench_machine *m)
{
    char buf[128];
    struct utsname u;

    memset(m, 0, sizeof *m);
    if (!proc_field("/proc/cpuinfo", "model name", m->cpu, sizeof m->cpu))
        copy(m->cpu, sizeof m->cpu, "unknown");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = cores > 0 ? (int)cores : 0;
    if (proc_field("/proc/meminfo", "MemTotal", buf, sizeof buf)) {
        double kib = 0;
        if (sscanf(buf, "%lf", &kib) == 1)
            m->memory_gib = kib / (1024.0 * 1024.0);
    }
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%s %s %s", u.sysname, u.release, u.machine);
    else
        copy(m->kernel, sizeof m->kernel, "unknown");
#if defined(__clang__)
    snprintf(m->compiler, sizeof m->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(m->compiler, sizeof m->compiler, "gcc %s", __VERSION__);
#else
    copy(m->compiler, sizeof m->compiler, "unknown");
#endif
    copy(m->cflags, sizeof m->cflags, PERCEPT_BENCH_CFLAGS);
    bench_machine_load(m->load_start);
    m->load_end[0] = m->load_end[1] = m->load_end[2] = -1;
    m->clock_read_ns = replay_clock_cost_ns();
}
