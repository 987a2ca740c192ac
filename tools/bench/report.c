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

/* Contender b's median time per operation of `kind` in `mode` (ticked:
 * OP_MOVE per entry); NAN when it did not run there, failed, or the case
 * has no such operation. */
static double figure(const case_result *c, int mode, size_t b, int kind)
{
    const backend_figures *f = &c->fig[mode][b];
    return mode < case_modes(&c->plan) && f->ran && !f->failed ? f->ns[kind] : NAN;
}

/* The same per tick, in a ticked mode. */
static double per_tick(const case_result *c, int mode, size_t b)
{
    const backend_figures *f = &c->fig[mode][b];
    return mode < case_modes(&c->plan) && f->ran && !f->failed ? f->per_tick : NAN;
}

static void print_value(FILE *out, double v, int failed)
{
    if (failed || isnan(v))
        fprintf(out, " %9s", failed ? "FAILED" : "-");
    else
        fprintf(out, " %9.0f", v);
}

void report_print_header(FILE *out, const size_t *threads, size_t count)
{
    fprintf(out,
            "# median ns per operation; entry:T, tick:T: per entry and per tick of "
            "percept_tick() on T threads (homemade: per moved entity and per tick); bytes: per "
            "entity\n%-14s %9s %-11s",
            "workload", "n", "backend");
    for (int k = 0; k < OP_KIND_COUNT; k++)
        fprintf(out, " %9s", bench_op_kind_name(k));
    for (size_t t = 0; t < count; t++) {
        char entry[32], tick[32];
        snprintf(entry, sizeof entry, "entry:%zu", threads[t]);
        snprintf(tick, sizeof tick, "tick:%zu", threads[t]);
        fprintf(out, " %9s %9s", entry, tick);
    }
    fprintf(out, " %9s\n", "bytes");
}

void report_print_case(FILE *out, const case_result *c)
{
    int modes = case_modes(&c->plan);
    for (size_t b = 0; b < c->contender_count; b++) {
        const backend_figures *single = &c->fig[MODE_SINGLE][b];
        if (!single->ran && !(modes > 1 && c->fig[1][b].ran))
            continue;
        fprintf(out, "%-14s %9zu %-11s", c->plan.workload, c->plan.n, c->contenders[b]);
        for (int k = 0; k < OP_KIND_COUNT; k++)
            print_value(out, figure(c, MODE_SINGLE, b, k), single->failed);
        for (int mode = 1; mode < modes; mode++) {
            print_value(out, figure(c, mode, b, OP_MOVE), c->fig[mode][b].failed);
            print_value(out, per_tick(c, mode, b), c->fig[mode][b].failed);
        }
        print_value(out, single->ran ? single->bytes_per_entity : NAN, single->failed);
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
        for (int mode = 0; mode < case_modes(&c->plan); mode++) {
            const char *by = c->checked_against[mode];
            how = !by ? 2 : strcmp(by, BENCH_REFERENCE) && how < 1 ? 1 : how;
        }
        checked[how]++;
        failed += c->failed != 0;
    }
    static const char *const how[3] = {" identical to " BENCH_REFERENCE "'s",
                                       " identical to each other's",
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

void report_homemade_verdict(const bench_report *r, char *buf, size_t size)
{
    size_t ran = 0, checked = 0, failed = 0;
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        int bad = 0;
        for (int mode = 1; c->homemade && mode < case_modes(&c->plan); mode++)
            bad |= c->fig[mode][c->contender_count - 1].failed;
        ran += c->homemade != 0;
        failed += bad;
        checked += c->homemade && !bad && c->homemade_checked;
    }
    const char *s = failed == 1 ? "" : "s";
    if (failed)
        snprintf(buf, size, "homemade FAILED in %zu case%s: its replay failed or its counts differ",
                 failed, s);
    else if (ran && checked == ran)
        snprintf(buf, size,
                 "homemade's ENTER and LEAVE counts equal percept's in every tick (%zu case%s)",
                 ran, ran == 1 ? "" : "s");
    else if (ran)
        snprintf(buf, size,
                 "homemade's ENTER and LEAVE counts equal percept's in every tick (%zu case%s); "
                 "compared with nothing (%zu case%s)",
                 checked, checked == 1 ? "" : "s", ran - checked, ran - checked == 1 ? "" : "s");
    else if (size)
        buf[0] = '\0';
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
        for (size_t b = 0; b < r->cases[i].contender_count; b++)
            if (strcmp(r->cases[i].plan.workload, workload) == 0 &&
                !isnan(figure(&r->cases[i], mode, b, kind)))
                return 1;
    return 0;
}

/* The index of contender `name` in c, or -1. */
static int find_contender(const case_result *c, const char *name)
{
    for (size_t b = 0; b < c->contender_count; b++)
        if (strcmp(c->contenders[b], name) == 0)
            return (int)b;
    return -1;
}

/* The table of workload w's replays with one call per operation. */
static void put_workload(FILE *out, const bench_report *r, const bench_workload_info *w)
{
    int kinds[OP_KIND_COUNT], first = 1;
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
            fputs(" bytes/entity |\n| ---: | --- |", out);
            for (int k = 0; k <= OP_KIND_COUNT; k++)
                fputs(k == OP_KIND_COUNT || kinds[k] ? " ---: |" : "", out);
            fputc('\n', out);
        }
        int ref = find_contender(c, BENCH_REFERENCE);
        for (size_t b = 0; b < c->contender_count; b++) {
            if (!c->fig[MODE_SINGLE][b].ran)
                continue;
            fprintf(out, "| %zu | %s", c->plan.n, c->contenders[b]);
            for (int k = 0; k < OP_KIND_COUNT; k++)
                if (kinds[k])
                    put_cell(out, figure(c, MODE_SINGLE, b, k),
                             ref >= 0 ? figure(c, MODE_SINGLE, (size_t)ref, k) : NAN);
            double bytes = c->fig[MODE_SINGLE][b].bytes_per_entity;
            fprintf(out, isnan(bytes) ? " | - |\n" : " | %.0f |\n", bytes);
        }
    }
}

/* The percept backend of c fastest per entry in `mode`, or -1. */
static int best_backend(const case_result *c, int mode)
{
    int best = -1;
    for (size_t b = 0; b < c->contender_count; b++) {
        double v = case_is_homemade(c, b) ? NAN : figure(c, mode, b, OP_MOVE);
        if (!isnan(v) && (best < 0 || v < figure(c, mode, (size_t)best, OP_MOVE)))
            best = (int)b;
    }
    return best;
}

static const char *threads_noun(size_t threads)
{
    return threads == 1 ? "thread" : "threads";
}

/* Per ticked case with homemade and thread count: the best backend's time
 * per entry over homemade's per moved entity. */
static void put_against_homemade(FILE *out, const bench_report *r)
{
    int first = 1;
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        for (int mode = 1; c->homemade && mode < case_modes(&c->plan); mode++) {
            double home = figure(c, mode, c->contender_count - 1, OP_MOVE);
            int best = best_backend(c, mode);
            if (best < 0 || isnan(home))
                continue;
            if (first)
                fputs("| workload | N | threads | homemade, per moved entity | best backend | its "
                      "time per entry | percept/homemade |\n"
                      "| --- | ---: | ---: | ---: | --- | ---: | ---: |\n",
                      out);
            first = 0;
            double v = figure(c, mode, (size_t)best, OP_MOVE);
            fprintf(out, "| %s | %zu | %zu", c->plan.workload, c->plan.n,
                    c->plan.threads[mode - 1]);
            put_cell(out, home, NAN);
            fprintf(out, " | %s", c->contenders[best]);
            put_cell(out, v, NAN);
            fprintf(out, v / home >= 0.1 ? " | \xc3\x97%.2f |\n" : " | \xc3\x97%.2g |\n", v / home);
        }
    }
    if (first)
        fputs("Homemade ran in no case.\n", out);
}

/* The table of workload w's ticked replays, a pair of columns per thread
 * count; ratios to homemade's where it runs, else to bruteforce's. */
static void put_ticks(FILE *out, const bench_report *r, const bench_workload_info *w)
{
    int first = 1;
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        int modes = case_modes(&c->plan);
        if (strcmp(c->plan.workload, w->name) != 0 || modes < 2)
            continue;
        int ref = c->homemade ? (int)c->contender_count - 1 : find_contender(c, BENCH_REFERENCE);
        if (first) {
            first = 0;
            fprintf(out, "\n### %s, tick by tick\n\nRatios to %s's.\n\n| N | backend |", w->name,
                    c->homemade ? BENCH_HOMEMADE : BENCH_REFERENCE);
            for (int mode = 1; mode < modes; mode++) {
                size_t t = c->plan.threads[mode - 1];
                fprintf(out, " per entry, %zu %s | per tick, %zu %s |", t, threads_noun(t), t,
                        threads_noun(t));
            }
            fputs("\n| ---: | --- |", out);
            for (int mode = 1; mode < modes; mode++)
                fputs(" ---: | ---: |", out);
            fputc('\n', out);
        }
        for (size_t b = 0; b < c->contender_count; b++) {
            if (!c->fig[1][b].ran)
                continue;
            fprintf(out, "| %zu | %s", c->plan.n, c->contenders[b]);
            for (int mode = 1; mode < modes; mode++) {
                put_cell(out, figure(c, mode, b, OP_MOVE),
                         ref >= 0 ? figure(c, mode, (size_t)ref, OP_MOVE) : NAN);
                put_cell(out, per_tick(c, mode, b),
                         ref >= 0 ? per_tick(c, mode, (size_t)ref) : NAN);
            }
            fputs(" |\n", out);
        }
    }
}

static void put_header(FILE *out, const bench_report *r, int homemade)
{
    struct utsname u;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(out,
            "# percept benchmarks\n\nGenerated by `%s` (run it again with `--out FILE`, or "
            "`make bench` in a build tree). Every figure comes from this one run: compare "
            "backends by their ratios (\xc3\x97) to `%s`%s, measured side by side.\n\n"
            "- percept %s, seed %llu, %s, %.0f s\n",
            r->command, BENCH_REFERENCE,
            homemade ? ", and tick by tick to `" BENCH_HOMEMADE "`" : "", percept_version(),
            (unsigned long long)r->seed, date, r->seconds);
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

static void put_correctness(FILE *out, const bench_report *r, int ticked, int homemade)
{
    char verdict[512];
    fprintf(out,
            "\n## Correctness\n\nEvery replay folds each event, with the index of the call that "
            "caused it, into a hash. Up to %d entities the hash is compared with `%s`'s "
            "(replayed untimed if it is not among the backends), above with the first "
            "backend's.",
            BENCH_REFERENCE_LIMIT, BENCH_REFERENCE);
    if (ticked)
        fputs(" Replays tick by tick are held to that backend's replay tick by tick on the first "
              "thread count, whatever their own: a tick has no transient pairs, so its events "
              "are not a single call's.",
              out);
    if (homemade)
        fputs(" `" BENCH_HOMEMADE "` counts the ENTER and LEAVE pairs of the workload's first "
              "sense in each tick; the same counts of that replay must equal them.",
              out);
    fputs("\n\n", out);
    for (size_t i = 0; i < r->count; i++) {
        const case_result *c = &r->cases[i];
        for (size_t b = 0; b < c->contender_count; b++)
            for (int mode = 0; mode < case_modes(&c->plan); mode++)
                if (c->fig[mode][b].failed) {
                    fprintf(out, "- `%s` N=%zu", c->plan.workload, c->plan.n);
                    if (mode != MODE_SINGLE)
                        fprintf(out, " tick by tick on %zu %s", c->plan.threads[mode - 1],
                                threads_noun(c->plan.threads[mode - 1]));
                    fprintf(out, ", `%s`: %s\n\n", c->contenders[b], c->fig[mode][b].error);
                }
    }
    report_verdict(r, verdict, sizeof verdict);
    fprintf(out, "**%c%s.**\n", verdict[0] == 'e' ? 'E' : verdict[0], verdict + 1);
    report_homemade_verdict(r, verdict, sizeof verdict);
    if (verdict[0])
        fprintf(out, "\n**%c%s.**\n", verdict[0] == 'h' ? 'H' : verdict[0], verdict + 1);
}

static void put_scaling(FILE *out, const bench_report *r)
{
    const case_result *c0 = &r->cases[0];
    fprintf(out,
            "\n## Scaling at constant density\n\n`uniform_walk` with the world grown in "
            "proportion to N (its tables below hold the figures). The exponent is the "
            "slope of log(time per move) against log(N): 0 means a move costs the same in "
            "any world, 1 that it grows like N.\n\n![time per move against N, "
            "log-log](%s)\n\n| exponent |",
            r->chart);
    for (size_t b = 0; b < c0->contender_count; b++)
        fprintf(out, " %s |", c0->contenders[b]);
    fputs("\n| --- |", out);
    for (size_t b = 0; b < c0->contender_count; b++)
        fputs(" ---: |", out);
    for (int mode = 0; mode < case_modes(&c0->plan); mode++) {
        if (mode == MODE_SINGLE)
            fputs("\n| one call per move |", out);
        else
            fprintf(out, "\n| tick by tick, %zu %s |", c0->plan.threads[mode - 1],
                    threads_noun(c0->plan.threads[mode - 1]));
        for (size_t b = 0; b < c0->contender_count; b++) {
            double e = sweep_exponent(r, b, mode);
            fprintf(out, isnan(e) ? " - |" : " %.3f |", e);
        }
    }
    fputc('\n', out);
}

int report_write_markdown(FILE *out, const bench_report *r)
{
    int ticked = 0, homemade = 0;
    for (size_t i = 0; i < r->count; i++) {
        ticked |= case_modes(&r->cases[i].plan) > 1;
        homemade |= r->cases[i].homemade;
    }
    put_header(out, r, homemade);
    put_correctness(out, r, ticked, homemade);
    if (r->chart && r->count)
        put_scaling(out, r);
    fprintf(out, "\n## Workloads\n\nOne call per operation. Each cell: the median time per "
                 "operation over the rounds, and its ratio (\xc3\x97) to `" BENCH_REFERENCE
                 "`'s in the same case. bytes/entity: `percept_memory_usage()` after the last "
                 "operation, over the entities then in the world.\n");
    for (size_t w = 0; w < bench_workload_count; w++)
        put_workload(out, r, &bench_workloads[w]);
    if (ticked) {
        fprintf(out,
                "\n## Ticks\n\nEach tick's moves, teleports and turns made by one "
                "`percept_tick()` call (an entity the workload turns twice in a tick: its last "
                "turn), its adds, removes and emits by single calls around it, with "
                "`percept_options.threads` set to each thread count. *per entry*: the median "
                "time of the tick calls over their entries, the entities the ticks change; "
                "*per tick*: over the ticks that change some.\n\n"
                "`%s` (tools/bench/homemade.c) is what a game would write in an afternoon "
                "instead: every tick it counting-sorts all entities into a uniform grid of "
                "cells as wide as the largest range, makes each one's list of the targets in "
                "its range by the first sense, sorts it and diffs it against the last tick's, "
                "the entities shared out among the threads. Its time is its whole tick's, per "
                "entity moved in it (tick 0 aside). It runs where the first sense has plain "
                "ranges (no margin, cone, mask or hiding) and no entity comes or goes. It "
                "handles that sense alone, where percept's worlds have the workload's three.\n\n"
                "### Percept against homemade\n\nThe fastest backend's time per entry over "
                "homemade's per moved entity, the same entities in the same ticks: per tick "
                "the ratio is the same.\n\n",
                BENCH_HOMEMADE);
        put_against_homemade(out, r);
        for (size_t w = 0; w < bench_workload_count; w++)
            put_ticks(out, r, &bench_workloads[w]);
    }
    fprintf(out,
            "\n## How it is measured\n\n"
            "- Each workload is generated from the seed into an array of operations before any "
            "timing and replayed against every backend, each replay in a freshly forked "
            "process. Tick 0 adds the population, every later tick moves it: 10 movement ticks "
            "up to 2000 entities, 5 up to 5000, 3 up to 20000, 2 up to 70000, 1 above (3 with "
            "`--quick`). Above 20000 entities, a replay with one call per move stops 50000 "
            "operations after tick 0 (not with `--full`); tick by tick, every tick runs.\n"
            "- Backends run interleaved in rounds (A B C%s, and again), after an untimed "
            "warm-up replay of the populating tick up to 20000 entities: 11 rounds up to 2000 "
            "entities, 3 up to 20000, 2 up to 300000, 1 above, unless `--rounds` or `--quick` "
            "says otherwise.\n"
            "- Consecutive operations of one kind are timed as one run with two clock reads; "
            "a tick's call is one run.\n"
            "- Worlds are made with `percept_world_open_string()`, `move_events = off`, and an "
            "event callback that only hashes and counts. Every sense section sets "
            "`observer_cell_size` and "
            "the backend's size parameter (`cell_size` of grid and hashgrid, `tower_size` of "
            "tower) to the workloads' base range (npc_cones: its hearing range), doubled while "
            "the world would need more than 2^20 cells: the senses share one backend "
            "instance.",
            ticked ? ", then tick by tick A B C and homemade on each thread count" : "");
    if (r->count) {
        char ini[1024];
        bench_workload stub = {.bounds = r->cases[0].bounds};
        replay_config(ini, sizeof ini, "grid", &stub);
        fprintf(out, " For `%s` at N=%zu with grid:\n\n```ini\n%s```\n", r->cases[0].plan.workload,
                r->cases[0].plan.n, ini);
    }
    return ferror(out) ? -1 : 0;
}
