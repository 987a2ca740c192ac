/*
 * report.c - the benchmark's report: docs/BENCHMARKS.md in Markdown, and
 * the SVG charts it shows.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "svg.h"
#include "targets.h"
#include "tuning.h"

/* ------------------------------------------------------------------------ */
/* Formatting                                                                */

/* The unit a time is shown in, and how many decimals keep three significant digits. */
static const char *time_unit(double ns, double *scale, int *digits)
{
    const char *unit = "ns";
    *scale = 1;
    if (ns >= 1e9) {
        *scale = 1e9;
        unit = "s";
    } else if (ns >= 1e6) {
        *scale = 1e6;
        unit = "ms";
    } else if (ns >= 1e3) {
        *scale = 1e3;
        unit = "\xc2\xb5s";
    }
    double v = ns / *scale;
    *digits = *scale == 1 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
    return unit;
}

static void fmt_ns(char *buf, size_t size, double ns)
{
    double scale;
    int digits;
    if (isnan(ns)) {
        snprintf(buf, size, "-");
        return;
    }
    const char *unit = time_unit(ns, &scale, &digits);
    snprintf(buf, size, "%.*f %s", digits, ns / scale, unit);
}

/* A median and a minimum in the median's unit: "3.70 \xc2\xb5s (3.65)". */
static void fmt_ns_pair(char *buf, size_t size, double med, double min)
{
    double scale;
    int digits;
    if (isnan(med)) {
        snprintf(buf, size, "-");
        return;
    }
    const char *unit = time_unit(med, &scale, &digits);
    snprintf(buf, size, "%.*f %s (%.*f)", digits, med / scale, unit, digits, min / scale);
}

static void fmt_ratio(char *buf, size_t size, double r)
{
    if (isnan(r) || isinf(r))
        buf[0] = '\0';
    else if (r >= 100)
        snprintf(buf, size, " \xc3\x97%.0f", r);
    else if (r >= 10)
        snprintf(buf, size, " \xc3\x97%.1f", r);
    else if (r >= 0.1)
        snprintf(buf, size, " \xc3\x97%.2f", r);
    else
        snprintf(buf, size, " \xc3\x97%.2g", r);
}

static void fmt_count(char *buf, size_t size, size_t n)
{
    if (n >= 1000000 && n % 1000000 == 0)
        snprintf(buf, size, "%zuM", n / 1000000);
    else if (n >= 1000 && n % 1000 == 0)
        snprintf(buf, size, "%zuk", n / 1000);
    else
        snprintf(buf, size, "%zu", n);
}

/* A figure this run did not measure (the resident memory of replays that ran in
 * this process): an em dash, unlike the "-" of a figure that does not apply. */
#define NOT_MEASURED "\xe2\x80\x94"

static double ratio(double v, double base)
{
    return base > 0 && !isnan(v) ? v / base : NAN;
}

static const backend_result *base_of(const case_result *c)
{
    return c->base >= 0 ? &c->b[c->base] : NULL;
}

/* The operation a workload is about: what its chart and summary show. */
static int main_kind(const char *workload)
{
    return strcmp(workload, "teleport") == 0 ? OP_TELEPORT : OP_MOVE;
}

static int has_workload(const bench_report *r, const char *name)
{
    for (size_t i = 0; i < r->case_count; i++)
        if (suite_case_in(&r->cases[i].plan, CASE_TABLE) &&
            strcmp(r->cases[i].plan.workload, name) == 0)
            return 1;
    return 0;
}

/* Whether the reference backend was in this run (it may still have been skipped at some sizes). */
static int reference_in_run(const bench_report *r)
{
    for (size_t b = 0; b < r->backend_count; b++)
        if (strcmp(r->backends[b], BENCH_REFERENCE) == 0)
            return 1;
    return 0;
}

static double total_events(const backend_result *br)
{
    uint64_t e = 0;
    for (int k = 0; k < OP_KIND_COUNT; k++)
        e += br->events[k];
    return (double)e;
}

/* ------------------------------------------------------------------------ */
/* Sections                                                                  */

static void write_notes(FILE *f, const case_result *c, int quiet_reference);

/* Text in a table cell: a '|' would end the cell, so it is escaped. */
static void write_cell_text(FILE *f, const char *text)
{
    for (; *text; text++) {
        if (*text == '|')
            fputc('\\', f);
        fputc(*text, f);
    }
}

static void write_machine(FILE *f, const bench_report *r)
{
    const bench_machine *m = r->machine;
    fprintf(f, "## Machine\n\n| | |\n| --- | --- |\n");
    fprintf(f, "| CPU | %s, %d core%s online |\n", m->cpu, m->cores, m->cores == 1 ? "" : "s");
    if (m->memory_gib > 0)
        fprintf(f, "| memory | %.1f GiB |\n", m->memory_gib);
    fprintf(f, "| system | %s |\n", m->kernel);
    fprintf(f, "| compiler | %s |\n", m->compiler);
    fprintf(f, "| flags | `%s` |\n", m->cflags);
    if (m->load_start[0] >= 0)
        fprintf(f,
                "| load average | %.2f at the start, %.2f at the end (1 minute; other jobs share "
                "the machine, which is why every figure is also given as a ratio measured in the "
                "same run) |\n",
                m->load_start[0], m->load_end[0]);
    fprintf(f, "| clock | `CLOCK_MONOTONIC`, %.0f ns per read |\n", m->clock_read_ns);
    fprintf(f, "| code | percept %s", percept_version());
    if (r->label) {
        fputs(", ", f);
        write_cell_text(f, r->label);
    }
    fputs(" |\n", f);
    char secs[32];
    bench_fmt_seconds(secs, sizeof secs, r->seconds);
    if (r->trace) /* a trace is replayed as it is: no seed went into it */
        fprintf(f, "| run | %s, %s |\n\n", r->date, secs);
    else
        fprintf(f, "| run | %s, seed %llu, %s |\n\n", r->date, (unsigned long long)r->seed, secs);
}

static void write_targets(FILE *f, const bench_report *r)
{
    target_result t[TARGET_COUNT];
    targets_evaluate(r->cases, r->case_count, t);
    if (r->quick)
        /* Tiny worlds, one round: the figures are noise next to the goals. */
        fprintf(f, "## Targets\n\nMeasured by this `--quick` run, whose sizes are too small to "
                   "judge them by: the figures are shown, not judged. They are goals to steer "
                   "by, not test assertions.\n\n");
    else
        fprintf(f, "## Targets\n\nMeasured by this run (`make bench`); they are goals to steer "
                   "by, not test assertions.\n\n");
    fprintf(f, "| target | goal | measured | status |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < TARGET_COUNT; i++) {
        int bold = t[i].status == TARGET_MISSED && !r->quick;
        fprintf(f, "| %s | %s | %s | %s%s%s |\n", t[i].name, t[i].goal, t[i].measured,
                bold ? "**" : "", target_status_label(&t[i], r->quick), bold ? "**" : "");
    }
    fprintf(f, "\n");
}

/* The limits the plan set on the replays, the same for every case. */
typedef struct replay_limits {
    size_t move_limit, move_limit_above; /* above that N, replays stop after move_limit moves */
    size_t reference_full, reference_limit;
} replay_limits;

static replay_limits limits_of(const bench_report *r)
{
    replay_limits l = {0, 0, 0, 0};
    for (size_t i = 0; i < r->case_count; i++) {
        const case_plan *p = &r->cases[i].plan;
        if (p->move_limit > l.move_limit) {
            l.move_limit = p->move_limit;
            l.move_limit_above = p->move_limit_above;
        }
        if (p->reference_full > l.reference_full)
            l.reference_full = p->reference_full;
        if (p->reference_limit > l.reference_limit)
            l.reference_limit = p->reference_limit;
    }
    return l;
}

/* The method's bullets that hold for every replay, of a named workload or a
 * trace: the forked process and its memory figure (or the one process, and no
 * memory figure), the world and its hash. */
static void write_replay_method(FILE *f, const bench_report *r)
{
    if (r->in_process)
        fprintf(f,
                "- Every replay ran inside the `percept-bench` process, one after another, "
                "with no fork (`PERCEPT_BENCH_NO_FORK` was set, for a profiler that does not "
                "follow `fork()`): the backends did not start from the same heap, no replay "
                "was stopped for its time, and the resident memory was not measured (" NOT_MEASURED
                " in the tables), as the process's peak holds every earlier replay's. The "
                "allocator given to the world counts its calls.\n");
    else
        fprintf(f, "- Every replay runs in a freshly forked process: all backends start from the "
                   "same heap, and the peak resident set (`ru_maxrss`) of that process, minus what "
                   "it held before creating the world, is the memory figure (divided by the most "
                   "entities alive at once). The allocator given to the world counts its calls.\n");
    fprintf(f,
            "- Worlds are created with `percept_world_open_string()`, `move_events = off`, and an "
            "event callback that folds every ENTER and LEAVE event, with the index of the call "
            "that caused it, into an order-independent hash.\n");
}

static void write_method(FILE *f, const bench_report *r)
{
    size_t rounds_lo = 0, rounds_hi = 0;
    double max_replay = 0;
    int budgeted = 0; /* any case's rounds were cut to a time budget */
    replay_limits l = limits_of(r);
    char above[32], full[32], limit[32];
    for (size_t i = 0; i < r->case_count; i++) {
        size_t k = r->cases[i].plan.rounds;
        if (r->cases[i].plan.max_replay > max_replay)
            max_replay = r->cases[i].plan.max_replay;
        budgeted |= r->cases[i].plan.budget > 0;
        if (!rounds_lo || k < rounds_lo)
            rounds_lo = k;
        if (k > rounds_hi)
            rounds_hi = k;
    }
    char rounds_text[48];
    if (rounds_lo == rounds_hi)
        snprintf(rounds_text, sizeof rounds_text, "%zu", rounds_hi);
    else
        snprintf(rounds_text, sizeof rounds_text, "%zu to %zu", rounds_lo, rounds_hi);
    fmt_count(above, sizeof above, l.move_limit_above);
    fmt_count(full, sizeof full, l.reference_full);
    fmt_count(limit, sizeof limit, l.reference_limit);
    fprintf(f,
            "## How it is measured\n\n"
            "- Each workload is generated from the seed into an array of operations (add, move, "
            "teleport, remove, login) before any timing; tick 0 adds the population, every later "
            "tick moves it. The same array is replayed against every backend.\n");
    write_replay_method(f, r);
    fprintf(f,
            "- Backends run interleaved in rounds (A B C ..., A B C ...) after an untimed warm-up "
            "replay of the populating tick; %s measured round%s per case. Figures are the "
            "median over rounds, with the minimum in parentheses; tick p50 and p99 pool the "
            "movement ticks of all rounds.\n"
            "- Consecutive operations of one kind are timed as one run with two clock reads, so "
            "the clock's cost (%.0f ns a read) stays out of the per-operation figures.\n",
            rounds_text, rounds_hi > 1 ? "s" : "", r->machine->clock_read_ns);
    for (size_t i = 0; i < r->case_count; i++) {
        if (r->cases[i].plan.flags & CASE_BATCHED) {
            fprintf(
                f, "- A batched case (see [Moves in batches](#moves-in-batches-percept_move_many)) "
                   "replays the same workload as its twin, which makes one call per move, but "
                   "whole ticks at every size; the two run their rounds in turn (A B C, A' B' "
                   "C', A B C, ...), so that the ratio between them is measured side by side.\n");
            break;
        }
    }
    if (l.move_limit)
        fprintf(f,
                "- Above %s entities a replay is the populating tick and the next %zu "
                "operations, the same prefix for every backend (`--full` replays whole ticks).",
                above, l.move_limit);
    else
        fprintf(f, "- Every replay runs whole ticks.");
    char secs[32];
    bench_fmt_seconds(secs, sizeof secs, max_replay);
    /* --max-replay 0 and --budget 0 (and --quick's and --full's runs) set no limit;
     * a replay in this process has no child to stop (write_replay_method() says so). */
    if (max_replay > 0 && !r->in_process)
        fprintf(f,
                " A replay that runs over %s is stopped: its backend is noted as too slow and "
                "skipped at the workload's larger sizes.",
                secs);
    else if (!r->in_process)
        fprintf(f, " No replay is stopped for its time.");
    if (budgeted)
        fprintf(f, " The run has a time budget shared among the cases; a case runs fewer rounds "
                   "(at least one) rather than overrun its share, and each table says how many "
                   "it ran.\n");
    else
        fprintf(f, " The run has no time budget: every case runs all its rounds.\n");
    if (!reference_in_run(r)) {
        suite_check s;
        suite_check_summary(r->cases, r->case_count, &s);
        if (!s.hidden)
            fprintf(f, "- `%s` was not in this run", BENCH_REFERENCE);
        else if (l.reference_full < l.reference_limit)
            fprintf(f,
                    "- `%s` was not among the backends, so it ran as the reference only: in "
                    "each case up to %s entities, one untimed replay, for its events (everything "
                    "up to %s entities, the populating and first movement tick above), not in "
                    "the tables",
                    BENCH_REFERENCE, limit, full);
        else
            fprintf(f,
                    "- `%s` was not among the backends, so it ran as the reference only: in "
                    "each case up to %s entities, one untimed replay, for its events, not in "
                    "the tables",
                    BENCH_REFERENCE, limit);
        fprintf(f, ": ratios (\xc3\x97) are to `grid` where it ran, else to the first backend in "
                   "the list, always measured in the same run.\n\n");
        return;
    }
    if (l.reference_full < l.reference_limit)
        fprintf(f,
                "- `%s` is O(N) per query: it replays everything up to %s entities, only the "
                "populating and first movement tick up to %s, and nothing above.",
                BENCH_REFERENCE, full, limit);
    else
        fprintf(f,
                "- `%s` is O(N) per query: it replays everything up to %s entities, and nothing "
                "above.",
                BENCH_REFERENCE, limit);
    fprintf(f,
            " Ratios (\xc3\x97) are to `%s` where it ran, else to `grid`, always measured in the "
            "same run; where the reference ran only the first tick, the ratios compare every "
            "backend over that same first tick.\n\n",
            BENCH_REFERENCE);
}

/* How the events were checked, for the Correctness section (after "compared at the end
 * of every tick with "): the reference up to its limit, the majority beyond. */
static void write_check_rule(FILE *f, const bench_report *r, const suite_check *s)
{
    replay_limits l = limits_of(r);
    char full[32], limit[32];
    fmt_count(full, sizeof full, l.reference_full);
    fmt_count(limit, sizeof limit, l.reference_limit);
    int beyond = s->reference_whole < r->case_count; /* checkpoints the reference did not reach */
    if (s->by_reference) {
        fprintf(f, "`%s`'s, the reference, up to %s entities, whatever the order of the backends",
                BENCH_REFERENCE, limit);
        if (l.reference_full < l.reference_limit)
            fprintf(f,
                    " (above %s entities over the populating and first movement tick, which "
                    "is all it replays there)",
                    full);
        if (s->hidden)
            fprintf(f, "; it was not among the backends, so it was replayed for that alone, once "
                       "per case and untimed, and is not in the tables");
        fprintf(f, ". ");
        if (beyond)
            fprintf(f, "Beyond what it replayed, with ");
    }
    if (beyond)
        fprintf(f, "the hash a strict majority of the backends that got there agree on: a backend "
                   "is wrong only when most of them agree on another hash, and where no hash has a "
                   "strict majority the backends disagree, none is blamed, and the run fails. ");
}

/*
 * Whose events a verdict says were checked: "every backend's events", or, when some
 * backend was skipped for its time (--max-replay), "the events of `a`, `b`", the
 * backends that were checked; then *skipped is the end of the verdict, which names
 * the backends skipped, else "". A backend skipped where it was too slow was not
 * checked there, and the report must not claim it was.
 */
static const char *checked_events(const case_result *cases, size_t count, const suite_check *s,
                                  char *subject, size_t size, char *skipped, size_t skipped_size)
{
    char names[4096];
    skipped[0] = '\0';
    if (!s->skipped)
        return "every backend's events";
    suite_describe_backends(cases, count, 1, "`", names, sizeof names);
    snprintf(skipped, skipped_size, "; NOT checked: %s", names);
    suite_describe_backends(cases, count, 0, "`", names, sizeof names);
    snprintf(subject, size, "the events of %s", names);
    return subject;
}

static void write_correctness(FILE *f, const bench_report *r)
{
    size_t bad = 0, checks = 0;
    int batched = 0;
    suite_check s;
    char subject[4200], skipped[4200];
    suite_check_summary(r->cases, r->case_count, &s);
    const char *every = checked_events(r->cases, r->case_count, &s, subject, sizeof subject,
                                       skipped, sizeof skipped);
    for (size_t i = 0; i < r->case_count; i++) {
        const case_result *c = &r->cases[i];
        batched |= (c->plan.flags & CASE_BATCHED) != 0;
        for (size_t b = 0; b < c->backend_count; b++)
            if (c->b[b].ran)
                checks += c->b[b].rounds;
        if (c->mismatch || c->disagree || c->reference_failed)
            bad++;
    }
    fprintf(f, "## Correctness\n\n");
    if (r->backend_count == 1 && reference_in_run(r)) {
        fprintf(f,
                "Only `%s`, the reference, ran: its events were not compared with another "
                "backend's. ",
                BENCH_REFERENCE);
    } else {
        fprintf(f, "The event hash of every replay was compared at the end of every tick with ");
        write_check_rule(f, r, &s);
        if (batched)
            fprintf(f, "Batched cases, whose moves deliver their events in another order, are "
                       "checked the same way among the batched replays. ");
    }
    fprintf(f, "%zu cases, %zu timed replays", r->case_count, checks);
    if (bad)
        fprintf(f, ": **%zu case%s failed the check: the figures below are not valid.**\n\n", bad,
                bad == 1 ? "" : "s");
    else if (s.usable == 0)
        fprintf(f, ": **no backend completed a replay: nothing was compared.**\n\n");
    else if (s.unchecked)
        fprintf(f,
                ": **in %zu case%s a backend's events were compared with no other replay's, so "
                "nothing says they are right.**\n\n",
                s.unchecked_cases, s.unchecked_cases == 1 ? "" : "s");
    else if (r->backend_count == 1 && reference_in_run(r))
        fprintf(f, "%s.\n\n", skipped);
    else if (s.checked == 0) /* the others skipped: the reference alone completed a replay */
        fprintf(f,
                ": **only `%s`, the reference, completed a replay: no backend's events were "
                "compared with it%s.**\n\n",
                BENCH_REFERENCE, skipped);
    else if (s.by_reference == r->case_count && s.reference_whole == r->case_count)
        fprintf(f, ": **%s are identical to the reference's%s.**\n\n", every, skipped);
    else if (s.by_reference)
        fprintf(f,
                ": **%s are identical to the reference's where it ran, and to the other "
                "backends' elsewhere%s.**\n\n",
                every, skipped);
    else
        fprintf(f, ": **%s are identical to the other backends'%s.**\n\n", every, skipped);
    int listed = 0;
    for (size_t i = 0; i < r->case_count; i++) {
        const case_result *c = &r->cases[i];
        const char *batch = c->plan.flags & CASE_BATCHED ? " batched" : "";
        for (size_t b = 0; b < c->backend_count; b++) {
            if (c->b[b].failed)
                fprintf(f, "- **%s N=%zu%s, %s**: %s\n", c->plan.workload, c->plan.n, batch,
                        c->b[b].name, c->b[b].error);
            else if (suite_usable(&c->b[b]) && !c->b[b].compared && !suite_is_reference(c, b))
                fprintf(f,
                        "- **%s N=%zu%s, %s**: its events were compared with no other "
                        "replay's\n",
                        c->plan.workload, c->plan.n, batch, c->b[b].name);
            else
                continue;
            listed = 1;
        }
        if (c->check_note[0]) { /* a disagreement, or what became of the hidden reference */
            fprintf(f, "- **%s N=%zu%s**: %s\n", c->plan.workload, c->plan.n, batch, c->check_note);
            listed = 1;
        }
    }
    if (listed)
        fprintf(f, "\n");
}

/* The size the summary shows: 10k if it was run, else the largest table size. */
static size_t summary_size(const bench_report *r)
{
    size_t best = 0;
    for (size_t i = 0; i < r->case_count; i++) {
        const case_result *c = &r->cases[i];
        if (!suite_case_in(&c->plan, CASE_TABLE))
            continue;
        if (c->plan.n == 10000)
            return 10000;
        if (c->plan.n > best)
            best = c->plan.n;
    }
    return best;
}

/* A table's header: a first column, then one column per backend. */
static void backend_columns(FILE *f, const bench_report *r, const char *first, const char *align)
{
    fprintf(f, "| %s |", first);
    for (size_t b = 0; b < r->backend_count; b++)
        fprintf(f, " %s |", r->backends[b]);
    fprintf(f, "\n| %s |", align);
    for (size_t b = 0; b < r->backend_count; b++)
        fprintf(f, " ---: |");
    fprintf(f, "\n");
}

/* One row of the summary: backend by backend, case c's time per operation of `kind`,
 * the fastest in bold, with its ratio to the case's base. */
static void summary_row(FILE *f, const case_result *c, const char *label, int kind)
{
    int best = -1;
    /* Where the backends disagree, nobody's figures are known good: none is the fastest. */
    for (size_t b = 0; !c->disagree && b < c->backend_count; b++)
        if (suite_usable(&c->b[b]) && !isnan(c->b[b].med_ns[kind]) &&
            (best < 0 || c->b[b].med_ns[kind] < c->b[best].med_ns[kind]))
            best = (int)b;
    fprintf(f, "| %s |", label);
    const backend_result *base = base_of(c);
    for (size_t b = 0; b < c->backend_count; b++) {
        const backend_result *br = &c->b[b];
        char t[32], q[32];
        if (!br->ran) {
            fprintf(f, " skipped |");
            continue;
        }
        if (br->failed) {
            fprintf(f, " FAILED |");
            continue;
        }
        fmt_ns(t, sizeof t, br->med_ns[kind]);
        fmt_ratio(q, sizeof q,
                  base ? ratio(suite_comparable_ns(c, b, kind), base->med_ns[kind]) : NAN);
        fprintf(f, " %s%s%s%s |", (int)b == best ? "**" : "", t, (int)b == best ? "**" : "", q);
    }
    fprintf(f, "\n");
}

static void write_summary(FILE *f, const bench_report *r)
{
    size_t n = summary_size(r);
    char size[32];
    if (!n)
        return;
    fmt_count(size, sizeof size, n);
    fprintf(f, "## At a glance: %s entities\n\n", size);
    fprintf(f,
            "Median time per move (per teleport for `teleport`), the fastest in bold, and its "
            "ratio to the base of the case. Where `%s` ran only the first movement tick, the "
            "ratio compares that same tick, so it can differ from the quotient of the times "
            "shown.\n\n",
            BENCH_REFERENCE);
    backend_columns(f, r, "workload", "---");
    for (size_t w = 0; w < bench_workload_count; w++) {
        const case_result *c =
            targets_find_case(r->cases, r->case_count, bench_workloads[w].name, n, 0);
        if (c)
            summary_row(f, c, c->plan.workload, main_kind(c->plan.workload));
    }
    /* The batched twins, below the others: their figure is per moved entity. */
    int batched = 0;
    for (size_t w = 0; w < bench_workload_count; w++) {
        const case_result *c =
            targets_find_case(r->cases, r->case_count, bench_workloads[w].name, n, 1);
        if (!c)
            continue;
        char label[96];
        snprintf(label, sizeof label, "%s, batched", c->plan.workload);
        summary_row(f, c, label, OP_MOVE);
        batched = 1;
    }
    fprintf(f, "\n");
    if (batched)
        fprintf(
            f,
            "Rows marked batched make each tick's moves (and teleports) in one "
            "`percept_move_many()` call and show the time per moved entity; their ratios "
            "are to `%s` batched too. See [Moves in batches](#moves-in-batches-percept_move_many)."
            "\n\n",
            BENCH_REFERENCE);
}

static void chart_link(FILE *f, const bench_report *r, const char *file, const char *alt)
{
    if (r->svg_dir)
        fprintf(f, "![%s](%s%s)\n\n", alt, r->svg_link ? r->svg_link : "", file);
}

/* The sweep's scaling exponent per backend, over its single-call or its batched cases. */
static void exponent_row(FILE *f, const bench_report *r, int batched)
{
    size_t few = 0, few_lo = 0, few_hi = 0, shown = 0;
    fprintf(f, "| **exponent** |");
    for (size_t b = 0; b < r->backend_count; b++) {
        size_t points, lo, hi;
        double e = targets_sweep_exponent(r->cases, r->case_count, r->backends[b], batched, &points,
                                          &lo, &hi);
        if (isnan(e))
            fprintf(f, " - |");
        else
            fprintf(f, " **%.3f** (%zu sizes) |", e, points);
        shown += !isnan(e);
        if (isnan(e) && points > few) {
            few = points;
            few_lo = lo;
            few_hi = hi;
        }
    }
    fprintf(f, "\n\n");
    /* The targets call such a slope unusable: the table does not show one either. */
    if (few) {
        char lo[32], hi[32];
        fmt_count(lo, sizeof lo, few_lo);
        fmt_count(hi, sizeof hi, few_hi);
        fprintf(f,
                "%s: it takes at least %d sweep sizes spanning a factor of %d in N, as in the "
                "targets; %s %zu (%s to %s).\n\n",
                shown ? "Some backends have no exponent" : "No exponent is shown",
                TARGETS_SWEEP_MIN_SIZES, TARGETS_SWEEP_SPAN,
                shown ? "the others ran at most" : "this run has", few, lo, hi);
    }
}

static void write_sweep(FILE *f, const bench_report *r)
{
    const case_result *pts[SUITE_MAX_POINTS];
    size_t m = 0;
    for (size_t i = 0; i < r->case_count && m < SUITE_MAX_POINTS; i++)
        if (suite_case_in(&r->cases[i].plan, CASE_SWEEP | CASE_MEMORY))
            pts[m++] = &r->cases[i];
    if (!m)
        return;
    fprintf(f, "## Scaling at constant density\n\n"
               "`uniform_walk` (about 20 neighbours per sense, three senses) with the world grown "
               "in proportion to N. The scaling exponent is the slope of log(time per move) "
               "against log(N) over the sweep sizes: 0 means a move costs the same in any world "
               "size, 1 means it grows like N.\n\n");
    chart_link(f, r, "bench-scaling.svg", "time per move against N, log-log");
    backend_columns(f, r, "N", "---:");
    for (size_t i = 0; i < m; i++) {
        char size[32];
        fmt_count(size, sizeof size, pts[i]->plan.n);
        fprintf(f, "| %s%s |", size, pts[i]->plan.flags & CASE_SWEEP ? "" : " (memory run)");
        for (size_t b = 0; b < pts[i]->backend_count; b++) {
            const backend_result *br = &pts[i]->b[b];
            char t[32], q[32];
            if (!br->ran || br->failed) {
                fprintf(f, " %s |", br->ran ? "FAILED" : "-");
                continue;
            }
            fmt_ns(t, sizeof t, br->med_ns[OP_MOVE]);
            fmt_ratio(q, sizeof q,
                      base_of(pts[i]) ? ratio(suite_comparable_ns(pts[i], b, OP_MOVE),
                                              base_of(pts[i])->med_ns[OP_MOVE])
                                      : NAN);
            fprintf(f, " %s%s |", t, q);
        }
        fprintf(f, "\n");
    }
    exponent_row(f, r, 0);
    for (size_t i = 0; i < m; i++)
        write_notes(f, pts[i], 1);
    fprintf(f, "\n");

    if (r->in_process)
        fprintf(f, "### Memory\n\nPeak resident bytes per entity: not measured (" NOT_MEASURED
                   "), as the replays ran in one process (see [How it is measured](#how-it-is-"
                   "measured)). In parentheses: peak bytes the library held through its "
                   "allocator, per entity, same runs.\n\n");
    else
        fprintf(f, "### Memory\n\nPeak resident bytes per entity (in parentheses: peak bytes the "
                   "library held through its allocator, per entity), same runs.\n\n");
    chart_link(f, r, "bench-memory.svg", "resident bytes per entity against N");
    backend_columns(f, r, "N", "---:");
    for (size_t i = 0; i < m; i++) {
        char size[32];
        fmt_count(size, sizeof size, pts[i]->plan.n);
        fprintf(f, "| %s |", size);
        for (size_t b = 0; b < pts[i]->backend_count; b++) {
            const backend_result *br = &pts[i]->b[b];
            if (!suite_usable(br)) {
                fprintf(f, " - |");
                continue;
            }
            if (isnan(br->rss_per_entity))
                fprintf(f, " " NOT_MEASURED);
            else
                fprintf(f, " %.0f", br->rss_per_entity);
            if (!isnan(br->heap_per_entity))
                fprintf(f, " (%.0f)", br->heap_per_entity);
            fprintf(f, " |");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

/* The time per moved entity: the medians of moves and teleports weighted by their counts,
 * which in a batched case is its time per move (teleports count as moves there). */
static double moved_ns(const backend_result *br)
{
    double ns = 0, moved = 0;
    for (int k = OP_MOVE; k <= OP_TELEPORT; k++) {
        if (!br->ops[k] || isnan(br->med_ns[k]))
            continue;
        ns += br->med_ns[k] * (double)br->ops[k];
        moved += (double)br->ops[k];
    }
    return moved > 0 ? ns / moved : NAN;
}

/* A batched case's row: per backend its time per moved entity and the ratio to the same
 * backend's in the single-call twin. Returns whether a cell is over the reference's prefix. */
static int batched_row(FILE *f, const bench_report *r, const case_result *c, const char *label)
{
    const case_result *single =
        targets_find_case(r->cases, r->case_count, c->plan.workload, c->plan.n, 0);
    int partial = 0;
    fprintf(f, "| %s |", label);
    for (size_t b = 0; b < c->backend_count; b++) {
        const backend_result *br = &c->b[b], *twin = NULL;
        char t[32], q[32];
        if (!br->ran || br->failed) {
            fprintf(f, " %s |", br->ran ? "FAILED" : "-");
            continue;
        }
        for (size_t k = 0; single && k < single->backend_count && !twin; k++)
            if (strcmp(single->b[k].name, br->name) == 0 && suite_usable(&single->b[k]))
                twin = &single->b[k];
        fmt_ns(t, sizeof t, moved_ns(br));
        fmt_ratio(q, sizeof q, twin ? ratio(moved_ns(br), moved_ns(twin)) : NAN);
        fprintf(f, " %s%s%s |", t, q, br->partial ? " \xc2\xb9" : "");
        partial |= br->partial;
    }
    fprintf(f, "\n");
    return partial;
}

static void write_batched(FILE *f, const bench_report *r)
{
    const case_result *sweep[SUITE_MAX_POINTS], *sizes[SUITE_MAX_POINTS];
    size_t m = 0, k = 0;
    for (size_t i = 0; i < r->case_count; i++) {
        const case_result *c = &r->cases[i];
        if (suite_case_in(&c->plan, CASE_SWEEP | CASE_BATCHED) && m < SUITE_MAX_POINTS)
            sweep[m++] = c;
        else if (suite_case_in(&c->plan, CASE_TABLE | CASE_BATCHED) && k < SUITE_MAX_POINTS)
            sizes[k++] = c;
    }
    if (!m && !k)
        return;
    replay_limits l = limits_of(r);
    char above[32], limit[32];
    fmt_count(above, sizeof above, l.move_limit_above);
    fmt_count(limit, sizeof limit, l.reference_limit);
    char against[256];
    suite_check s;
    suite_check_summary(r->cases, r->case_count, &s);
    if (s.by_reference)
        snprintf(against, sizeof against,
                 "against `%s` batched up to %s entities%s, beyond that against the hash a "
                 "strict majority of the batched replays agree on",
                 BENCH_REFERENCE, limit, s.hidden ? " (replayed for that alone)" : "");
    else
        snprintf(against, sizeof against,
                 "against the hash a strict majority of the batched replays agree on");
    fprintf(f, "### Moves in batches (percept_move_many)\n\n"
               "A batch is a maximal run of consecutive moves and teleports within one tick, made "
               "by one `percept_move_many()` call, which makes them in an order of nearby "
               "positions, the same for every backend; in these workloads a batch is a whole "
               "movement tick, and batched replays run whole ticks at every size");
    if (l.move_limit)
        fprintf(f,
                " (above %s entities the replays with one call per move stop %zu operations "
                "into the first movement tick: their moves come in random order, so a move "
                "costs them the same early or late in a tick)",
                above, l.move_limit);
    fprintf(f,
            ". Each cell: the median time per moved entity in batches (the call's time over "
            "the entities it moved; the arrays it is given are filled before the clock starts), "
            "and its ratio (\xc3\x97) to the same backend's time per move with one "
            "`percept_move()` call per move in this run: below 1, batches are faster. Batched "
            "replays deliver the events in another order, so they are checked among "
            "themselves: %s.%s\n\n",
            against,
            r->svg_dir && m ? " The dashed lines of the scaling chart above are the batched "
                              "sweep."
                            : "");
    int partial = 0;
    if (m) {
        backend_columns(f, r, "N", "---:");
        for (size_t i = 0; i < m; i++) {
            char size[32];
            fmt_count(size, sizeof size, sweep[i]->plan.n);
            partial |= batched_row(f, r, sweep[i], size);
        }
        exponent_row(f, r, 1);
    }
    if (k) {
        fprintf(f,
                "%s `teleport`'s time is per moved entity, moves and teleports together, "
                "and so is the single calls' it is compared with (their medians weighted by "
                "their counts).\n\n",
                m ? "The workloads' other sizes." : "The workloads' sizes.");
        backend_columns(f, r, "workload", "---");
        for (size_t i = 0; i < k; i++) {
            char size[32], label[96];
            fmt_count(size, sizeof size, sizes[i]->plan.n);
            snprintf(label, sizeof label, "%s, %s", sizes[i]->plan.workload, size);
            partial |= batched_row(f, r, sizes[i], label);
        }
        fprintf(f, "\n");
    }
    if (partial)
        fprintf(f, "\xc2\xb9 the populating and first movement tick only, in both modes.\n\n");
    for (size_t i = 0; i < m; i++)
        write_notes(f, sweep[i], 1);
    for (size_t i = 0; i < k; i++)
        write_notes(f, sizes[i], 1);
    fprintf(f, "\n");
}

/* Why backends were skipped, one line each; the reference's size limit, which the
 * method explains, is left out when quiet_reference is set. */
static void write_notes(FILE *f, const case_result *c, int quiet_reference)
{
    for (size_t b = 0; b < c->backend_count; b++) {
        const backend_result *br = &c->b[b];
        if (!br->note[0] || (br->ran && !br->too_slow))
            continue;
        if (quiet_reference && !br->too_slow && strcmp(br->name, BENCH_REFERENCE) == 0)
            continue;
        fprintf(f, "- `%s` at N=%zu: %s\n", br->name, c->plan.n, br->note);
    }
}

/* The operation kinds some backend of case c ran, in kind order; returns how many. */
static int case_kinds(const case_result *c, int kinds[OP_KIND_COUNT])
{
    int nk = 0;
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        for (size_t b = 0; b < c->backend_count; b++) {
            if (c->b[b].ran && c->b[b].ops[k]) {
                kinds[nk++] = k;
                break;
            }
        }
    }
    return nk;
}

static void write_backend_table(FILE *f, const case_result *c, int ticks);

static void write_case_table(FILE *f, const case_result *c)
{
    int kinds[OP_KIND_COUNT], nk = case_kinds(c, kinds);
    const backend_result *base = base_of(c);
    char size[32];
    fmt_count(size, sizeof size, c->plan.n);
    fprintf(f, "#### N = %s\n\n", size);
    fprintf(f, "%zu movement tick%s, %zu operations", c->tick_count ? c->tick_count - 1 : 0,
            c->tick_count == 2 ? "" : "s", c->op_count);
    if (c->replay_ops < c->op_count)
        fprintf(f, " (replayed: the populating tick and the next %zu)",
                c->replay_ops - c->populate_ops);
    fprintf(f, ", %zu round%s, %.0f \xc3\x97 %.0f world", c->plan.rounds,
            c->plan.rounds == 1 ? "" : "s", c->bounds.max_x - c->bounds.min_x,
            c->bounds.max_y - c->bounds.min_y);
    if (!isnan(c->pairs_per_observer))
        fprintf(f, ", %.1f perceived per entity and sense at the end", c->pairs_per_observer);
    fprintf(f, "; ratios to `%s`%s. Events per operation:", base ? base->name : "-",
            base && base->partial ? " over the operations it ran (ticks 0 and 1)" : "");
    for (int i = 0; i < nk; i++) {
        double e = NAN;
        for (size_t b = 0; b < c->backend_count && isnan(e); b++)
            if (suite_usable(&c->b[b]) && c->b[b].ops[kinds[i]])
                e = c->b[b].events_per_op[kinds[i]];
        fprintf(f, "%s %s %.1f", i ? "," : "", bench_op_kind_name(kinds[i]), e);
    }
    fprintf(f, ".\n\n");
    write_backend_table(f, c, 1);
    write_notes(f, c, 0);
    fprintf(f, "\n");
}

/* Case c's table, a row per backend: the time per operation of each kind, ns/event,
 * the tick percentiles if `ticks`, bytes/entity and allocs/op. */
static void write_backend_table(FILE *f, const case_result *c, int ticks)
{
    int kinds[OP_KIND_COUNT], nk = case_kinds(c, kinds);
    int columns = nk + (ticks ? 5 : 3);
    const backend_result *base = base_of(c);
    fprintf(f, "| backend |");
    for (int i = 0; i < nk; i++)
        fprintf(f, " %s |", bench_op_kind_name(kinds[i]));
    fprintf(f, " ns/event |%s bytes/entity | allocs/op |\n| --- |",
            ticks ? " tick p50 | tick p99 |" : "");
    for (int i = 0; i < columns; i++)
        fprintf(f, " ---: |");
    fprintf(f, "\n");
    for (size_t b = 0; b < c->backend_count; b++) {
        const backend_result *br = &c->b[b];
        char t[48], q[32];
        fprintf(f, "| %s%s |", br->name, br->partial ? " \xc2\xb9" : "");
        if (!br->ran || !suite_usable(br)) {
            for (int i = 0; i < columns; i++)
                fprintf(f, " %s |", br->ran ? "FAILED" : "skipped");
            fprintf(f, "\n");
            continue;
        }
        for (int i = 0; i < nk; i++) {
            int k = kinds[i];
            if (!br->ops[k]) {
                fprintf(f, " - |");
                continue;
            }
            fmt_ns_pair(t, sizeof t, br->med_ns[k], br->min_ns[k]);
            fmt_ratio(q, sizeof q,
                      base ? ratio(suite_comparable_ns(c, b, k), base->med_ns[k]) : NAN);
            fprintf(f, " %s%s |", t, q);
        }
        double ev = total_events(br);
        fprintf(f, " %.1f |", ev > 0 ? br->total_ns / ev : NAN);
        if (ticks) {
            fmt_ns(t, sizeof t, br->tick_p50);
            fmt_ratio(q, sizeof q,
                      base ? ratio(suite_comparable_tick(c, b, br->tick_p50), base->tick_p50)
                           : NAN);
            fprintf(f, " %s%s |", t, isnan(br->tick_p50) ? "" : q);
            fmt_ns(t, sizeof t, br->tick_p99);
            fmt_ratio(q, sizeof q,
                      base ? ratio(suite_comparable_tick(c, b, br->tick_p99), base->tick_p99)
                           : NAN);
            fprintf(f, " %s%s |", t, isnan(br->tick_p99) ? "" : q);
        }
        fmt_ratio(q, sizeof q, base ? ratio(br->rss_per_entity, base->rss_per_entity) : NAN);
        if (isnan(br->rss_per_entity))
            fprintf(f, " " NOT_MEASURED " |");
        else
            fprintf(f, " %.0f%s |", br->rss_per_entity, q);
        for (int i = 0; i < nk; i++)
            if (br->ops[kinds[i]])
                fprintf(f, "%s %s %.2f", i ? "," : "", bench_op_kind_name(kinds[i]),
                        br->allocs_per_op[kinds[i]]);
        fprintf(f, " |\n");
    }
    int partial = 0;
    for (size_t b = 0; b < c->backend_count; b++)
        partial |= c->b[b].partial;
    fprintf(f, "\n");
    if (partial)
        fprintf(f, "\xc2\xb9 the populating and first movement tick only.\n\n");
}

/* The slope of log(time per operation) against log(N) over the workload's sizes. */
static void write_workload_exponents(FILE *f, const bench_report *r, const char *name)
{
    int kind = main_kind(name), any = 0;
    size_t lo = 0, hi = 0;
    for (size_t b = 0; b < r->backend_count; b++) {
        double x[SUITE_MAX_POINTS], y[SUITE_MAX_POINTS];
        size_t b_lo, b_hi;
        size_t m = suite_series(r->cases, r->case_count, CASE_TABLE, name, r->backends[b], kind, x,
                                y, &b_lo, &b_hi);
        if (m && (!lo || b_lo < lo))
            lo = b_lo;
        if (b_hi > hi)
            hi = b_hi;
        double e = stats_loglog_slope(x, y, m);
        if (isnan(e))
            continue;
        fprintf(f, "%s `%s` %.2f",
                any ? "," : "Scaling exponent of the time per operation:", r->backends[b], e);
        any = 1;
    }
    if (any)
        fprintf(f, " (N = %zu to %zu).\n\n", lo, hi);
}

static void write_workloads(FILE *f, const bench_report *r)
{
    fprintf(f,
            "## Workloads\n\nEach cell: median time per operation (minimum over rounds) and "
            "its ratio to the case's base; ns/event is the whole replay's time over its "
            "events; ticks are movement ticks; bytes/entity is the peak resident set%s.\n\n",
            r->in_process ? " (not measured: the replays ran in one process)" : "");
    for (size_t w = 0; w < bench_workload_count; w++) {
        const char *name = bench_workloads[w].name;
        if (!has_workload(r, name))
            continue;
        fprintf(f, "### %s\n\n%s.\n\n", name, bench_workloads[w].description);
        char file[96];
        snprintf(file, sizeof file, "bench-%s.svg", name);
        chart_link(f, r, file, name);
        write_workload_exponents(f, r, name);
        for (size_t i = 0; i < r->case_count; i++) {
            const case_result *c = &r->cases[i];
            if (suite_case_in(&c->plan, CASE_TABLE) && strcmp(c->plan.workload, name) == 0)
                write_case_table(f, c);
        }
    }
    fprintf(f, "## Events per operation\n\nThe same for every backend (that is the check); how "
               "much work the workloads ask for, per move.\n\n");
    chart_link(f, r, "bench-events.svg", "events per move against N");
}

/* `text` as Markdown code: fenced by one backtick more than its longest run of them, and
 * padded when it starts or ends with one, so that a value may hold any. */
static void write_code(FILE *f, const char *text)
{
    size_t longest = 0, run = 0, len = strlen(text);
    for (const char *c = text; *c; c++) {
        run = *c == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    int pad = len > 0 && (text[0] == '`' || text[len - 1] == '`');
    for (size_t i = 0; i <= longest; i++)
        fputc('`', f);
    fprintf(f, "%s%s%s", pad ? " " : "", text, pad ? " " : "");
    for (size_t i = 0; i <= longest; i++)
        fputc('`', f);
}

/* A sentence for each backend that --param gave settings to, after the text
 * on how percept-bench sizes the sections: what it ran with instead. */
static void write_params(FILE *f, const bench_report *r)
{
    for (size_t b = 0; b < r->backend_count; b++) {
        const char *name = r->backends[b], *size_param = bench_tuning_size_param(name);
        size_t count = 0, k = 0;
        for (size_t i = 0; r->params && i < r->params->count; i++)
            count += bench_param_is_for(&r->params->p[i], name);
        if (count == 0)
            continue;
        fprintf(f, " `%s` ran with ", name);
        for (size_t i = 0; i < r->params->count; i++) {
            const bench_param *p = &r->params->p[i];
            if (!bench_param_is_for(p, name))
                continue;
            char setting[BENCH_PARAM_KEY_MAX + BENCH_PARAM_VALUE_MAX + 4];
            snprintf(setting, sizeof setting, "%s = %s", p->key, p->value);
            fputs(k == 0 ? "" : k + 1 == count ? " and " : ", ", f);
            write_code(f, setting);
            if (size_param && strcmp(p->key, size_param) == 0)
                fputs(" (in place of the tuned size)", f);
            k++;
        }
        fputs(" in every sense section, given by `--param`.", f);
    }
}

/* The backend the configuration example shows: grid when it ran, else the
 * first that ran with a size the bench tunes, else the first given --param
 * settings, else the first: an example of what this run did. */
static const char *example_backend(const bench_report *r)
{
    for (size_t b = 0; b < r->backend_count; b++)
        if (strcmp(r->backends[b], "grid") == 0)
            return r->backends[b];
    for (size_t b = 0; b < r->backend_count; b++)
        if (bench_tuning_size_param(r->backends[b]) != NULL)
            return r->backends[b];
    for (size_t b = 0; b < r->backend_count; b++)
        for (size_t i = 0; r->params && i < r->params->count; i++)
            if (bench_param_is_for(&r->params->p[i], r->backends[b]))
                return r->backends[b];
    return r->backend_count > 0 ? r->backends[0] : "grid";
}

static void write_configuration(FILE *f, const bench_report *r)
{
    fprintf(
        f,
        "## Configuration\n\n"
        "Every sense section sets the backend's size parameter (`cell_size` for grid and "
        "hashgrid, `tower_size` for tower) to %g\xc3\x97 and `observer_cell_size` to %g\xc3\x97 "
        "the largest typical range of the three senses (%g units; in `mixed_ranges` the "
        "typical ranges are %g / %g / %g for sight / hearing / smell, so the sizes follow "
        "sight's), doubled while the world would need more than 2^20 cells. The sections "
        "are identical, so the senses share one backend instance and one observer grid. "
        "bruteforce and crosslist take no parameters.",
        BENCH_CELL_FACTOR, BENCH_OBSERVER_CELL_FACTOR, BENCH_RANGE, BENCH_RANGE,
        BENCH_MIXED_HEARING * BENCH_RANGE, BENCH_MIXED_SMELL * BENCH_RANGE);
    write_params(f, r);
    fprintf(f, " Ranges are jittered per entity and sense by \xc3\x97"
               "0.8 to 1.2 except in `mixed_ranges`. For example, `uniform_walk`");
    const case_result *c = NULL;
    for (size_t i = 0; i < r->case_count; i++)
        if (strcmp(r->cases[i].plan.workload, "uniform_walk") == 0 &&
            (!c || r->cases[i].plan.n == 10000))
            c = &r->cases[i];
    if (!c) {
        fprintf(f, " is configured the same way.\n\n");
        return;
    }
    bench_workload stub;
    memset(&stub, 0, sizeof stub);
    stub.bounds = c->bounds;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        stub.typical_range[s] = BENCH_RANGE;
    char ini[BENCH_INI_SIZE];
    const char *shown = example_backend(r);
    if (bench_tuning_ini(ini, sizeof ini, shown, r->params, &stub) == 0)
        fprintf(f, " at N=%zu with %s:\n\n```ini\n%s```\n\n", c->plan.n, shown, ini);
    else
        fprintf(f, " is configured the same way (the example does not fit its buffer).\n\n");
}

/* ------------------------------------------------------------------------ */
/* A trace's report                                                          */

/* The backend whose event counts the trace report shows: the reference when it is among
 * the backends and completed, else the first that completed without failing the check;
 * NULL if none did. */
static const backend_result *trace_truth(const case_result *c)
{
    const backend_result *first = NULL;
    for (size_t b = 0; b < c->backend_count; b++) {
        const backend_result *br = &c->b[b];
        if (!suite_usable(br))
            continue;
        if (suite_is_reference(c, b))
            return br;
        if (!first)
            first = br;
    }
    return first;
}

/* Whether the trace has operations after tick 0: then it was cut into slices. */
static int has_slices(const bench_trace *t)
{
    return t->wl.tick_count > 1;
}

static void write_trace_correctness(FILE *f, const bench_trace *t, const case_result *c)
{
    size_t replays = 0, completed = 0;
    const backend_result *ref = NULL;
    char limit[48], subject[4200], skipped[4200];
    suite_check s;
    suite_check_summary(c, 1, &s);
    const char *every = checked_events(c, 1, &s, subject, sizeof subject, skipped, sizeof skipped);
    fmt_count(limit, sizeof limit, c->plan.reference_limit);
    strcat(limit, " entities");
    for (size_t b = 0; b < c->backend_count; b++) {
        if (c->b[b].ran)
            replays += c->b[b].rounds;
        completed += c->b[b].ran && c->b[b].rounds > 0;
        if (suite_is_reference(c, b))
            ref = &c->b[b];
    }
    fprintf(f, "## Correctness\n\n");
    if (!completed) {
        fprintf(f, "No backend completed a replay: nothing was compared.\n\n");
        return;
    }
    fprintf(f,
            "The event hash of every replay was compared at the end of tick 0%s (see [How it "
            "is measured](#how-it-is-measured)) with ",
            has_slices(t) ? " and of every slice" : " (the trace's end: it holds nothing else)");
    if (c->reference_ops > 0)
        fprintf(f, "`%s`'s, the reference%s", BENCH_REFERENCE,
                c->reference_hidden ? ", which was not among the backends: it replayed the "
                                      "trace for that alone, untimed, and is not in the tables"
                                    : "");
    else
        fprintf(f,
                "the hash a strict majority of the backends agree on (`%s`, the reference, %s%s): "
                "a backend is wrong only when most of them agree on another hash; without a "
                "strict majority the backends disagree and none is blamed",
                BENCH_REFERENCE,
                c->plan.n > c->plan.reference_limit ? "does not run above "
                : ref && !ref->ran                  ? "did not run"
                                                    : "did not complete a replay",
                c->plan.n > c->plan.reference_limit ? limit : "");
    fprintf(f, ". %zu timed replays", replays);
    if (c->mismatch || c->reference_failed)
        fprintf(f, ": **events differ: the figures below are not valid.**\n\n");
    else if (c->disagree)
        fprintf(f, ": **the backends disagree: the figures below are not valid, and no backend "
                   "is the fastest.**\n\n");
    else if (c->unchecked)
        fprintf(f, ": **a backend's events were compared with no other replay's, so nothing "
                   "says they are right.**\n\n");
    else if (c->backend_count == 1 && ref)
        fprintf(f, ", of the reference alone: its events were not compared with another "
                   "backend's.\n\n");
    else if (s.checked == 0) /* the others skipped: the reference alone completed a replay */
        fprintf(f,
                ": **only `%s`, the reference, completed a replay: no backend's events were "
                "compared with it%s.**\n\n",
                BENCH_REFERENCE, skipped);
    else if (c->reference_ops > 0)
        fprintf(f, ": **%s are identical to `%s`'s%s.**\n\n", every, BENCH_REFERENCE, skipped);
    else
        fprintf(f, ": **%s are identical to the other backends'%s.**\n\n", every, skipped);
    int listed = 0;
    for (size_t b = 0; b < c->backend_count; b++) {
        if (c->b[b].failed) {
            fprintf(f, "- **%s**: %s\n", c->b[b].name, c->b[b].error);
            listed = 1;
        } else if (suite_usable(&c->b[b]) && !c->b[b].compared && !suite_is_reference(c, b)) {
            fprintf(f, "- **%s**: its events were compared with no other replay's\n", c->b[b].name);
            listed = 1;
        }
    }
    if (c->check_note[0]) {
        fprintf(f, "- %s\n", c->check_note);
        listed = 1;
    }
    if (listed)
        fprintf(f, "\n");
}

static void write_trace_results(FILE *f, const bench_report *r, const bench_trace *t,
                                const case_result *c)
{
    const backend_result *base = base_of(c), *truth = trace_truth(c);
    fprintf(f, "## Results\n\n");
    fprintf(f,
            "%zu operations, %zu round%s, at most %zu entities at once, %.4g \xc3\x97 %.4g "
            "world",
            c->op_count, c->plan.rounds, c->plan.rounds == 1 ? "" : "s", c->plan.n,
            c->bounds.max_x - c->bounds.min_x, c->bounds.max_y - c->bounds.min_y);
    if (!isnan(c->pairs_per_observer))
        fprintf(f, ", %.1f perceived per entity and sense at the end", c->pairs_per_observer);
    fprintf(f,
            "; ratios to `%s`. Each cell: median time per operation (minimum over rounds) and "
            "its ratio; ns/event is a whole replay's time over its events; bytes/entity is the "
            "peak resident set over the most entities alive at once%s.\n\n",
            base ? base->name : "-",
            r->in_process ? " (not measured: the replays ran in one process)" : "");
    write_backend_table(f, c, 0);
    write_notes(f, c, 0);
    fprintf(f, "\n### Operations and events\n\n");
    if (!truth) {
        fprintf(f, "No backend completed a replay%s.\n\n",
                c->mismatch ? " whose events passed the check" : "");
        return;
    }
    fprintf(f,
            "The events (ENTER and LEAVE, all senses) each kind of operation delivered in one "
            "replay, as `%s` counted them",
            truth->name);
    /* After a mismatch the backends disagree: these counts are one backend's only. */
    if (c->mismatch)
        fprintf(f, ": a backend whose events passed the check. The events differ (see "
                   "[Correctness](#correctness)): other backends delivered other counts.\n\n");
    else if (c->disagree)
        fprintf(f, ". The backends disagree (see [Correctness](#correctness)): other backends "
                   "delivered other counts.\n\n");
    else
        fprintf(f, "; every backend checked delivers the same.\n\n");
    fprintf(f, "| operation | count | events | events/op |\n| --- | ---: | ---: | ---: |\n");
    for (int k = 0; k < OP_KIND_COUNT; k++)
        if (t->op_counts[k])
            fprintf(f, "| %s | %llu | %llu | %.2f |\n", bench_op_kind_name(k),
                    (unsigned long long)t->op_counts[k], (unsigned long long)truth->events[k],
                    (double)truth->events[k] / (double)t->op_counts[k]);
    fprintf(f, "\n");
}

static void write_trace_method(FILE *f, const bench_report *r, const bench_trace *t,
                               const case_result *c)
{
    const case_plan *p = &c->plan;
    char limit[32];
    fmt_count(limit, sizeof limit, p->reference_limit);
    fprintf(f,
            "## How it is measured\n\n"
            "- The trace is read whole into an array of operations before any timing, by "
            "`percept-replay`'s rules (format version 1): a line it would refuse, or that "
            "names an entity not in the world, stops the run before any replay. Every `add` "
            "makes a new entity with the next dense ID, so an ID removed and added again is "
            "another entity; every backend replays the same array. A `move` is timed as a "
            "move whatever its distance; `range`, `hide` and `show` are timed as kinds of "
            "their own.\n"
            "- A trace has no ticks. Tick 0 is its leading adds (%zu operations)",
            c->populate_ops);
    /* Each sentence below says what this run did: no warm-up, slice or limit it did not have. */
    if (p->warmup)
        fprintf(f, ", which an untimed warm-up replays once per backend before the rounds");
    if (has_slices(t))
        fprintf(f,
                ". The rest is cut into slices of %zu operations, the largest of the leading "
                "adds (%zu), the most entities alive at once (%zu) and %d, only to compare "
                "event hashes at their ends; a slice is not a game tick, so no tick latency is "
                "reported.\n",
                t->slice, c->populate_ops, t->wl.n, BENCH_TRACE_MIN_SLICE);
    else
        fprintf(f, ". Nothing follows them, so event hashes are compared at the trace's end "
                   "only, and no tick latency is reported.\n");
    write_replay_method(f, r);
    fprintf(f,
            "- Backends run interleaved in rounds (A B C ..., A B C ...), %zu measured round%s. "
            "Figures are the median over rounds, with the minimum in parentheses. Consecutive "
            "operations of one kind are timed as one run with two clock reads, so the clock's "
            "cost (%.0f ns a read) stays out of the per-operation figures.\n",
            p->rounds, p->rounds == 1 ? "" : "s", r->machine->clock_read_ns);
    char secs[32];
    bench_fmt_seconds(secs, sizeof secs, p->max_replay);
    if (p->max_replay > 0 && !r->in_process) /* a replay in this process is never stopped */
        fprintf(f, "- A replay that runs over %s is stopped and its backend noted as too slow.\n",
                secs);
    bench_fmt_seconds(secs, sizeof secs, p->budget);
    if (p->budget > 0)
        fprintf(f,
                "- The run has a time budget of %s: it runs fewer rounds (at least one) rather "
                "than overrun it.\n",
                secs);
    fprintf(f,
            "- `%s` is O(N) per query: it replays the whole trace when the trace never holds "
            "more than %s entities at once, and nothing otherwise.%s Ratios (\xc3\x97) are to "
            "`%s` where it ran among the backends, else to `grid`, else to the first backend, "
            "always measured in the same run.\n"
            "- The named workloads' targets and charts are not part of a trace's report.\n\n",
            BENCH_REFERENCE, limit,
            c->reference_hidden ? " It was not among the backends, so it ran as the reference "
                                  "only: one untimed replay, for its events, not in the tables."
                                : "",
            BENCH_REFERENCE);
}

static void write_trace_configuration(FILE *f, const bench_report *r, const bench_trace *t)
{
    const percept_bounds *b = &t->wl.bounds;
    fprintf(f, "## Configuration\n\nThe world's bounds (%.17g %.17g to %.17g %.17g) are ", b->min_x,
            b->min_y, b->max_x, b->max_y);
    if (t->bounds_from_world)
        fprintf(f, "the trace's `world` line. ");
    else
        fprintf(f, "the bounding box of every position in the trace%s. ",
                t->widened ? ", widened to the largest typical range on an axis where it was "
                             "narrower, so that cells of that size fit"
                           : "");
    fprintf(f, "A sense's typical range is the median of the non-zero ranges the trace gives "
               "it (in `add` and `range`):");
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        const char *name = percept_sense_name((percept_sense)s);
        int src = t->range_source[s];
        fprintf(f, "%s %s %.4g", s ? ";" : "", name, t->wl.typical_range[s]);
        if (src == s)
            fprintf(f, " (median of %zu range%s)", t->range_samples[s],
                    t->range_samples[s] == 1 ? "" : "s");
        else if (src >= 0)
            fprintf(f, " (none given: %s's)", percept_sense_name((percept_sense)src));
        else
            fprintf(f, " (no range given to any sense: the default)");
    }
    fprintf(f,
            ". Every sense section sets the backend's size parameter (`cell_size` for grid and "
            "hashgrid, `tower_size` for tower) to %g\xc3\x97 and `observer_cell_size` to "
            "%g\xc3\x97 the largest of them, doubled while the world would need more than 2^20 "
            "cells, as for the named workloads; bruteforce and crosslist take no parameters.",
            BENCH_CELL_FACTOR, BENCH_OBSERVER_CELL_FACTOR);
    write_params(f, r);
    fprintf(f, " The configuration each backend ran with:\n\n");
    for (size_t i = 0; i < r->backend_count; i++) {
        char ini[BENCH_INI_SIZE];
        if (bench_tuning_ini(ini, sizeof ini, r->backends[i], r->params, &t->wl) == 0)
            fprintf(f, "`%s`:\n\n```ini\n%s```\n\n", r->backends[i], ini);
        else
            fprintf(f, "`%s`: its configuration does not fit the report's buffer.\n\n",
                    r->backends[i]);
    }
}

static int write_trace_report(FILE *f, const bench_report *r)
{
    const bench_trace *t = r->trace;
    fprintf(f, "# percept trace benchmark: %s\n\n", t->name);
    fprintf(f,
            "Generated by `%s`: the trace `%s` (%lu lines, %zu operations) replayed against "
            "every backend side by side, as `percept-bench` replays its named workloads. Every "
            "figure comes from one run on the machine below; compare backends by their ratios, "
            "which were measured side by side.\n\n",
            r->command, t->name, t->lines, t->wl.op_count);
    write_machine(f, r);
    if (r->case_count == 0) {
        fprintf(f, "The trace could not be replayed (out of memory).\n\n");
        return ferror(f) ? -1 : 0;
    }
    write_trace_correctness(f, t, &r->cases[0]);
    write_trace_results(f, r, t, &r->cases[0]);
    write_trace_method(f, r, t, &r->cases[0]);
    write_trace_configuration(f, r, t);
    if (r->notes) {
        fprintf(f, "%s", r->notes);
        if (r->notes[0] && r->notes[strlen(r->notes) - 1] != '\n')
            fprintf(f, "\n");
    }
    return ferror(f) ? -1 : 0;
}

int report_write_markdown(FILE *f, const bench_report *r)
{
    if (r->trace)
        return write_trace_report(f, r);
    fprintf(f, "# percept benchmarks\n\n");
    fprintf(f,
            "Generated by `%s` (to regenerate, run that command again with `--out FILE`, or "
            "`make bench` in a source tree; do not edit by hand). "
            "Every figure comes from one run on the machine below; compare backends by their "
            "ratios, which were measured side by side.\n\n",
            r->command);
    write_machine(f, r);
    write_targets(f, r);
    write_correctness(f, r);
    write_summary(f, r);
    write_sweep(f, r);
    write_batched(f, r);
    write_workloads(f, r);
    write_method(f, r);
    write_configuration(f, r);
    if (r->notes) {
        fprintf(f, "%s", r->notes);
        if (r->notes[0] && r->notes[strlen(r->notes) - 1] != '\n')
            fprintf(f, "\n");
    }
    return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Charts                                                                    */

typedef struct series_data {
    double x[SUITE_MAX_POINTS], y[SUITE_MAX_POINTS];
} series_data;

static int chart(const bench_report *r, const char *file, const svg_chart *spec,
                 const svg_series *s, size_t count, FILE *log)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", r->svg_dir, file);
    errno = 0;
    if (svg_write_chart(path, spec, s, count) == 0)
        return 0;
    fprintf(log, "percept-bench: cannot write the chart %s: %s\n", path,
            errno ? strerror(errno) : "write error");
    return 1;
}

/*
 * One series per backend: its figure (see suite_series()) against N over the selected
 * cases. With `batched`, then a dashed one in the same colour over their batched twins,
 * for each backend that has any.
 */
static int backend_chart(const bench_report *r, const char *file, const svg_chart *spec,
                         unsigned flags, const char *workload, int figure, int batched, FILE *log)
{
    size_t backends = r->backend_count < BENCH_MAX_BACKENDS ? r->backend_count : BENCH_MAX_BACKENDS;
    series_data *d = calloc(2 * backends + 1, sizeof *d);
    char names[BENCH_MAX_BACKENDS][96];
    svg_series s[2 * BENCH_MAX_BACKENDS];
    if (!d)
        return 1;
    size_t count = 0;
    for (size_t b = 0; b < backends; b++) {
        size_t m = suite_series(r->cases, r->case_count, flags, workload, r->backends[b], figure,
                                d[count].x, d[count].y, NULL, NULL);
        s[count] = (svg_series){r->backends[b], (int)b, d[count].x, d[count].y, m, 0};
        count++;
    }
    for (size_t b = 0; batched && b < backends; b++) {
        size_t m = suite_series(r->cases, r->case_count, flags | CASE_BATCHED, workload,
                                r->backends[b], figure, d[count].x, d[count].y, NULL, NULL);
        if (!m)
            continue;
        snprintf(names[b], sizeof names[b], "%s batched", r->backends[b]);
        s[count] = (svg_series){names[b], (int)b, d[count].x, d[count].y, m, 1};
        count++;
    }
    int bad = chart(r, file, spec, s, count, log);
    free(d);
    return bad;
}

int report_write_charts(const bench_report *r, FILE *log)
{
    int bad = 0;
    if (!r->svg_dir || r->trace) /* a trace's report has no charts */
        return 0;
    svg_chart scaling = {"uniform_walk at constant density: time per move",
                         "entities (N)",
                         "time per move",
                         SVG_COUNT,
                         SVG_NS,
                         150,
                         "target at 10k: 150 ns"};
    bad += backend_chart(r, "bench-scaling.svg", &scaling, CASE_SWEEP | CASE_MEMORY, NULL, OP_MOVE,
                         1, log);
    svg_chart memory = {r->in_process ? "uniform_walk: peak resident bytes per entity (not "
                                        "measured: the replays ran in one process)"
                                      : "uniform_walk: peak resident bytes per entity",
                        "entities (N)",
                        "bytes per entity",
                        SVG_COUNT,
                        SVG_PLAIN,
                        1024,
                        "target: 1 KiB"};
    bad += backend_chart(r, "bench-memory.svg", &memory, CASE_SWEEP | CASE_MEMORY, NULL,
                         SUITE_RSS_PER_ENTITY, 0, log);
    for (size_t w = 0; w < bench_workload_count; w++) {
        const char *name = bench_workloads[w].name;
        if (!has_workload(r, name))
            continue;
        char file[96], title[160], ylabel[64];
        int kind = main_kind(name);
        snprintf(file, sizeof file, "bench-%s.svg", name);
        snprintf(title, sizeof title, "%s: time per %s", name, bench_op_kind_name(kind));
        snprintf(ylabel, sizeof ylabel, "time per %s", bench_op_kind_name(kind));
        svg_chart spec = {title, "entities (N)", ylabel, SVG_COUNT, SVG_NS, 0, NULL};
        if (strcmp(name, "uniform_walk") == 0) {
            spec.ref_y = 150;
            spec.ref_label = "target at 10k: 150 ns";
        } else if (kind == OP_TELEPORT) {
            spec.ref_y = 2000;
            spec.ref_label = "target at 10k: 2 \xc2\xb5s";
        }
        bad += backend_chart(r, file, &spec, CASE_TABLE, name, kind, 0, log);
    }

    /* Events per move: one series per workload, from any backend that ran it. */
    series_data *d = calloc(bench_workload_count, sizeof *d);
    svg_series *s = calloc(bench_workload_count, sizeof *s);
    size_t count = 0;
    for (size_t w = 0; d && s && w < bench_workload_count; w++) {
        const char *name = bench_workloads[w].name;
        size_t m = 0;
        for (size_t i = 0; i < r->case_count && m < SUITE_MAX_POINTS; i++) {
            const case_result *c = &r->cases[i];
            if (!suite_case_in(&c->plan, CASE_TABLE) || strcmp(c->plan.workload, name) != 0)
                continue;
            for (size_t b = 0; b < c->backend_count; b++) {
                if (suite_usable(&c->b[b]) && !c->b[b].partial && c->b[b].ops[OP_MOVE]) {
                    d[count].x[m] = (double)c->plan.n;
                    d[count].y[m] = c->b[b].events_per_op[OP_MOVE];
                    m++;
                    break;
                }
            }
        }
        if (m) {
            s[count] = (svg_series){name, (int)w, d[count].x, d[count].y, m, 0};
            count++;
        }
    }
    if (d && s) {
        svg_chart events = {"events per move (ENTER + LEAVE, three senses)",
                            "entities (N)",
                            "events per move",
                            SVG_COUNT,
                            SVG_PLAIN,
                            0,
                            NULL};
        bad += chart(r, "bench-events.svg", &events, s, count, log);
    } else {
        bad++;
    }
    free(d);
    free(s);
    return bad;
}
