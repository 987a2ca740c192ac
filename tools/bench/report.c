/*
 * report.c - a run's figures as a plain table, to compare runs line by line,
 * and as the Markdown report: how the events were checked, the scaling at
 * constant density, a table per workload, and how it was measured.
 */
#include "report.h"

#include <math.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* Backend b's median time per operation of `kind` in `mode`; NAN when it
 * did not run there, failed, or the case has no such operation. */
static double figure(const case_result *c, int mode, size_t b, int kind)
{
    const backend_figures *f = &c->fig[mode][b];
    return f->ran && !f->failed ? f->ns[kind] : NAN;
}

static void print_value(FILE *out, double v, int failed)
{
    if (failed || isnan(v))
        fprintf(out, " %9s", failed ? "FAILED" : "-");
    else
        fprintf(out, " %9.0f", v);
}

void report_print_header(FILE *out)
{
    fprintf(out,
            "# median ns per operation; batched: per move in percept_move_many(); bytes: "
            "per entity\n%-14s %9s %-11s",
            "workload", "n", "backend");
    for (int k = 0; k < OP_KIND_COUNT; k++)
        fprintf(out, " %9s", bench_op_kind_name(k));
    fprintf(out, " %9s %9s\n", "batched", "bytes");
}

void report_print_case(FILE *out, const case_result *c)
{
    for (size_t b = 0; b < c->backend_count; b++) {
        const backend_figures *f = &c->fig[MODE_SINGLE][b];
        if (!f->ran)
            continue;
        fprintf(out, "%-14s %9zu %-11s", c->plan.workload, c->plan.n, c->backends[b]);
        for (int k = 0; k < OP_KIND_COUNT; k++)
            print_value(out, figure(c, MODE_SINGLE, b, k), f->failed);
        print_value(out, figure(c, MODE_BATCHED, b, OP_MOVE),
                    c->plan.batched && c->fig[MODE_BATCHED][b].failed);
        print_value(out, f->bytes_per_entity, f->failed);
        fputc('\n', out);
    }
    fflush(out);
}

void report_verdict(const bench_report *r, char *buf, size_t size)
{
    size_t checked[3] = {0, 0, 0}, failed = 0; /* by bruteforce, by each other, by none */
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        int how = 0; /* the least checked of its modes */
        for (int mode = 0; mode < (c->plan.batched ? MODE_COUNT : 1); mode++) {
            const char *by = c->checked_against[mode];
            how = !by ? 2 : strcmp(by, BENCH_REFERENCE) && how < 1 ? 1 : how;
        }
        checked[how]++;
        failed += c->failed != 0;
    }
    static const char *const how[3] = {" identical to " BENCH_REFERENCE "'s", " to each other's",
                                       " compared with nothing (one backend)"};
    size_t len = (size_t)snprintf(buf, size,
                                  failed ? "FAILED in %zu case%s: a replay failed or "
                                           "its events differ"
                                         : "every backend's events are",
                                  failed, failed == 1 ? "" : "s");
    for (int k = 0, sep = 0; k < 3 && !failed && len < size; k++)
        if (checked[k])
            len += (size_t)snprintf(buf + len, size - len, "%s%s (%zu case%s)", sep++ ? ";" : "",
                                    how[k], checked[k], checked[k] == 1 ? "" : "s");
}

/* "1.79 µs ×0.38": the time and its ratio to bruteforce's, if known. */
static void put_cell(FILE *out, double ns, double ref)
{
    const char *unit = ns < 1e3 ? "ns" : ns < 1e6 ? "\xc2\xb5s" : "ms";
    double v = ns < 1e3 ? ns : ns < 1e6 ? ns / 1e3 : ns / 1e6;
    if (isnan(ns)) {
        fputs(" | -", out);
        return;
    }
    fprintf(out, " | %.*f %s", v < 10 && ns >= 1e3 ? 2 : v < 100 && ns >= 1e3 ? 1 : 0, v, unit);
    if (ref > 0)
        fprintf(out, ns / ref >= 0.1 ? " \xc3\x97%.2f" : " \xc3\x97%.2g", ns / ref);
}

static int has_kind(const bench_report *r, const char *workload, int mode, int kind)
{
    for (size_t i = 0; i < r->count; i++)
        for (size_t b = 0; b < r->cases[i].backend_count; b++)
            if (strcmp(r->cases[i].plan.workload, workload) == 0 &&
                !isnan(figure(&r->cases[i], mode, b, kind)))
                return 1;
    return 0;
}

static void put_workload(FILE *out, const bench_report *r, const bench_workload_info *w)
{
    int kinds[OP_KIND_COUNT], batched = has_kind(r, w->name, MODE_BATCHED, OP_MOVE), first = 1;
    for (int k = 0; k < OP_KIND_COUNT; k++)
        kinds[k] = has_kind(r, w->name, MODE_SINGLE, k);
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        if (strcmp(c->plan.workload, w->name) != 0)
            continue;
        if (first) {
            first = 0;
            fprintf(out, "\n### %s\n\n%s.\n\n| N | backend |", w->name, w->description);
            for (int k = 0; k < OP_KIND_COUNT; k++)
                if (kinds[k])
                    fprintf(out, " %s |", bench_op_kind_name(k));
            fprintf(out, "%s bytes/entity |\n| ---: | --- |", batched ? " batched |" : "");
            for (int k = 0; k < OP_KIND_COUNT + batched + 1; k++)
                fputs(k >= OP_KIND_COUNT || kinds[k] ? " ---: |" : "", out);
            fputc('\n', out);
        }
        int ref = -1;
        for (size_t b = 0; b < c->backend_count; b++)
            ref = strcmp(c->backends[b], BENCH_REFERENCE) == 0 ? (int)b : ref;
        for (size_t b = 0; b < c->backend_count; b++) {
            if (!c->fig[MODE_SINGLE][b].ran)
                continue;
            fprintf(out, "| %zu | %s", c->plan.n, c->backends[b]);
            for (int mode = 0; mode <= batched; mode++)
                for (int k = 0; k < OP_KIND_COUNT; k++)
                    if (mode ? k == OP_MOVE : kinds[k])
                        put_cell(out, figure(c, mode, b, k),
                                 ref >= 0 ? figure(c, mode, (size_t)ref, k) : NAN);
            double bytes = c->fig[MODE_SINGLE][b].bytes_per_entity;
            fprintf(out, isnan(bytes) ? " | - |\n" : " | %.0f |\n", bytes);
        }
    }
}

static void put_header(FILE *out, const bench_report *r)
{
    struct utsname u;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(out,
            "# percept benchmarks\n\nGenerated by `%s` (run it again with `--out FILE`, or "
            "`make bench` in a build tree). Every figure comes from this one run: compare "
            "backends by their ratios (\xc3\x97) to `%s`, measured side by side.\n\n"
            "- percept %s, seed %llu, %s, %.0f s\n",
            r->command, BENCH_REFERENCE, percept_version(), (unsigned long long)r->seed, date,
            r->seconds);
    if (uname(&u) == 0)
        fprintf(out, "- %s %s %s, %ld processors online, compiler " __VERSION__ "\n", u.sysname,
                u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN));
    double load; /* this run's own process counts for about 1 */
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &load) == 1)
        fprintf(out, "- load average %.2f at the end, this run included\n", load);
    if (f)
        fclose(f);
}

/* The slope of log(time per move) against log(N) over the sweep: 0 means a
 * move costs the same at any size; NAN with fewer than two sizes. */
static double sweep_exponent(const bench_report *r, size_t b, int mode)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        double y = c->plan.in_sweep ? figure(c, mode, b, OP_MOVE) : NAN;
        if (!(y > 0))
            continue;
        double lx = log((double)c->plan.n), ly = log(y);
        sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m++;
    }
    double den = m * sxx - sx * sx;
    return m < 2 || fabs(den) < 1e-12 ? NAN : (m * sxy - sx * sy) / den;
}

int report_write_markdown(FILE *out, const bench_report *r)
{
    char verdict[512];
    put_header(out, r);
    fprintf(out,
            "\n## Correctness\n\nEvery replay folds each event, with the index of the call that "
            "caused it, into a hash. Up to %d entities the hash is compared with `%s`'s "
            "(replayed untimed if it is not among the backends), above with the first "
            "backend's; batched replays among themselves.\n\n",
            BENCH_REFERENCE_LIMIT, BENCH_REFERENCE);
    for (size_t i = 0; i < r->count; i++)
        for (size_t b = 0; b < r->cases[i].backend_count; b++)
            for (int mode = 0; mode < MODE_COUNT; mode++)
                if (r->cases[i].fig[mode][b].failed)
                    fprintf(out, "- `%s` N=%zu%s, `%s`: %s\n\n", r->cases[i].plan.workload,
                            r->cases[i].plan.n, mode ? " batched" : "", r->cases[i].backends[b],
                            r->cases[i].fig[mode][b].error);
    report_verdict(r, verdict, sizeof verdict);
    fprintf(out, "**%c%s.**\n", verdict[0] == 'e' ? 'E' : verdict[0], verdict + 1);
    if (r->chart) {
        fprintf(out,
                "\n## Scaling at constant density\n\n`uniform_walk` with the world grown in "
                "proportion to N (its table below holds the figures). The exponent is the "
                "slope of log(time per move) against log(N): 0 means a move costs the same in "
                "any world, 1 that it grows like N.\n\n![time per move against N, "
                "log-log](%s)\n\n| exponent |",
                r->chart);
        for (size_t b = 0; b < r->cases[0].backend_count; b++)
            fprintf(out, " %s |", r->cases[0].backends[b]);
        fputs("\n| --- |", out);
        for (size_t b = 0; b < r->cases[0].backend_count; b++)
            fputs(" ---: |", out);
        for (int mode = 0; mode <= r->cases[0].plan.batched; mode++) {
            fputs(mode ? "\n| batched |" : "\n| one call per move |", out);
            for (size_t b = 0; b < r->cases[0].backend_count; b++) {
                double e = sweep_exponent(r, b, mode);
                fprintf(out, isnan(e) ? " - |" : " %.3f |", e);
            }
        }
        fputc('\n', out);
    }
    fprintf(out, "\n## Workloads\n\nEach cell: the median time per operation over the rounds, "
                 "and its ratio (\xc3\x97) to `" BENCH_REFERENCE "`'s in the same case. "
                 "*batched*: per move, each tick's moves made by one `percept_move_many()` "
                 "call. bytes/entity: `percept_memory_usage()` after the last operation, over "
                 "the entities then in the world.\n");
    for (size_t w = 0; w < bench_workload_count; w++)
        put_workload(out, r, &bench_workloads[w]);
    fprintf(out,
            "\n## How it is measured\n\n"
            "- Each workload is generated from the seed into an array of operations before any "
            "timing and replayed against every backend, each replay in a freshly forked "
            "process. Tick 0 adds the population, every later tick moves it: 10 movement ticks "
            "up to 2000 entities, 5 up to 5000, 3 up to 20000, 2 up to 70000, 1 above (3 with "
            "`--quick`). Above 20000 entities, a replay with one call per move stops 50000 "
            "operations after tick 0 (not with `--full`).\n"
            "- Backends run interleaved in rounds (A B C, then in batches A B C, and again), "
            "after an untimed warm-up replay of the populating tick up to 20000 entities: 11 "
            "rounds up to 2000 entities, 3 up to 20000, 2 up to 300000, 1 above, unless "
            "`--rounds` or `--quick` says otherwise.\n"
            "- Consecutive operations of one kind are timed as one run with two clock reads.\n"
            "- Worlds are made with `percept_world_open_string()`, `move_events = off`, and an "
            "event callback that only hashes. Every sense section sets `observer_cell_size` and "
            "the backend's size parameter (`cell_size` of grid and hashgrid, `tower_size` of "
            "tower) to the workloads' base range (npc_cones: its hearing range), doubled while "
            "the world would need more than 2^20 cells: the senses share one backend "
            "instance.");
    if (r->count) {
        char ini[1024];
        bench_workload stub = {.bounds = r->cases[0].bounds};
        replay_config(ini, sizeof ini, "grid", &stub);
        fprintf(out, " For `%s` at N=%zu with grid:\n\n```ini\n%s```\n", r->cases[0].plan.workload,
                r->cases[0].plan.n, ini);
    }
    return ferror(out) ? -1 : 0;
}
