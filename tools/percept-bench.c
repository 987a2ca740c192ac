/*
 * percept-bench - the reference benchmark of percept: named workloads
 * replayed against every backend side by side, their events checked against
 * bruteforce's. This file holds the command line and the plan of the run;
 * the workloads, the replays, the checks and the report are in tools/bench/.
 */
#include <percept.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "bench/suite.h"
#include "bench/workload.h"
#include "cli.h"
#include "install_dirs.h" /* written by make: the configured paths */

#define PROGRAM "percept-bench"
#define DEFAULT_SEED 20240611u
#define MAX_SIZES 16
#define MAX_CASES (12 * 2 * MAX_SIZES) /* every workload at every size, the sweep's too */
/* Above MOVE_LIMIT_ABOVE entities a replay with one call per move stops
 * MOVE_LIMIT operations after the populating tick (not with --full): its
 * moves come in random order, so a move costs the same early or late. */
#define MOVE_LIMIT 50000
#define MOVE_LIMIT_ABOVE 20000

/* The most threads a world's tick runs on (percept_options.threads). */
#define MAX_THREADS 64

typedef struct args {
    int full, quick, ticks;
    const char *workloads, *backends, *sizes, *sweep, *out, *svg_dir;
    size_t rounds; /* 0: by size */
    size_t threads[BENCH_MAX_THREADS], thread_count;
    uint64_t seed;
} args;

static void print_usage(void)
{
    printf("Usage: " PROGRAM " [OPTION]...\n\n"
           "Replay named workloads against every percept backend in interleaved rounds,\n"
           "check that all deliver bruteforce's events (above %d entities: each other's)\n"
           "and print the median time per operation of each workload, size and backend.\n\n"
           "Options:\n"
           "  --workloads LIST   comma-separated workloads (default: all)\n"
           "  --backends LIST    comma-separated backends, at most %d (default: every\n"
           "                     NAME.so in each directory of PERCEPT_PLUGIN_PATH, "
           "then " PERCEPT_PLUGIN_DIR ";\n"
           "                     the library finds each as it finds any plugin)\n"
           "  --sizes LIST       entity counts of the workload tables, suffix k or M\n"
           "                     (default 1k,10k; 1k,10k,100k with --full; 300 with --quick)\n"
           "  --sweep LIST|none  sizes of uniform_walk's constant-density sweep\n"
           "                     (default 1k,4k,16k,64k,256k; 300,1200 with --quick)\n"
           "  --ticks on|off     also replay every workload tick by tick: each tick's moves,\n"
           "                     teleports and turns in one percept_tick() call, and homemade,\n"
           "                     our own grid rebuilt every tick, where it fits (default on)\n"
           "  --threads LIST     the thread counts of the ticks, each 1 to %d, at most %d\n"
           "                     (default 1): percept_options.threads, homemade's threads\n"
           "  --rounds N         measured rounds per case, 1 to %d (default: 11 up to 2k\n"
           "                     entities, 3 up to 20k, 2 up to 300k, 1 above)\n"
           "  --quick            tiny sizes, one round, no warm-up: a smoke test\n"
           "  --full             add 100k entities, and replay whole ticks at every size\n"
           "                     (else above 20k: the populating tick and 50k moves)\n"
           "  --seed N           the workloads' seed (default %u)\n"
           "  --out FILE         write the Markdown report to FILE\n"
           "  --svg-dir DIR      write the chart bench-scaling.svg to DIR (default: the\n"
           "                     directory of --out's FILE)\n"
           "  --version          print the version and exit\n"
           "  --help             print this help and exit\n\n"
           "Workloads:",
           BENCH_REFERENCE_LIMIT, BENCH_MAX_BACKENDS, MAX_THREADS, BENCH_MAX_THREADS,
           BENCH_MAX_ROUNDS, DEFAULT_SEED);
    for (size_t w = 0; w < bench_workload_count; w++)
        printf("%s %s", w % 5 ? "" : "\n ", bench_workloads[w].name);
    printf("\n\nExit status: 0 when every replay ran and its events matched, 1 when not\n"
           "or the report could not be written, 2 on bad usage or a backend that\n"
           "cannot be loaded.\n");
}

/* The next item of a `sep`-separated list at *p, copied to buf; 0 at the end. */
static size_t next_item(const char **p, char sep, char *buf, size_t size)
{
    size_t len = *p ? strcspn(*p, (char[]){sep, '\0'}) : 0;
    if (!*p || (!len && !**p))
        return 0;
    snprintf(buf, size, "%.*s", (int)len, *p);
    *p += len + ((*p)[len] == sep);
    return len + 1; /* an empty item still counts */
}

/* Splits `list` into entity counts, each with an optional k or M; returns
 * how many, or -1 after a usage error. */
static int parse_counts(const char *opt, const char *list, size_t out[MAX_SIZES])
{
    char item[64], *end = item;
    int n = 0;
    while (next_item(&list, ',', item, sizeof item)) {
        unsigned long long v = item[0] >= '0' && item[0] <= '9' ? strtoull(item, &end, 10) : 0;
        v *= *end == 'k' || *end == 'K' ? 1000 : *end == 'M' || *end == 'm' ? 1000000 : 1;
        if (n == MAX_SIZES || !v || v > 100000000ull || (*end && (end[1] || !strchr("kKmM", *end))))
            return cli_usage_error(PROGRAM, "%s: '%s' is not an entity count (or one too many)",
                                   opt, item),
                   -1;
        out[n++] = (size_t)v;
    }
    return n;
}

/* Splits --threads' list into a->threads; 0, or -1 after a usage error. */
static int parse_threads(const char *list, args *a)
{
    char item[64], *end = item;
    a->thread_count = 0;
    while (next_item(&list, ',', item, sizeof item)) {
        unsigned long v = item[0] >= '0' && item[0] <= '9' ? strtoul(item, &end, 10) : 0;
        if (a->thread_count == BENCH_MAX_THREADS || v < 1 || v > MAX_THREADS || *end)
            return cli_usage_error(PROGRAM,
                                   "--threads: '%s' is not a thread count from 1 to %d "
                                   "(or one too many)",
                                   item, MAX_THREADS),
                   -1;
        a->threads[a->thread_count++] = v;
    }
    if (a->thread_count == 0)
        return cli_usage_error(PROGRAM, "--threads needs at least one thread count"), -1;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    *a = (args){.seed = DEFAULT_SEED, .ticks = 1, .threads = {1}, .thread_count = 1};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        char *end = NULL;
        int r;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage();
            return 0;
        } else if (cli_version(PROGRAM, arg)) {
            return 0;
        } else if (strcmp(arg, "--full") == 0 || strcmp(arg, "--quick") == 0) {
            *(arg[2] == 'f' ? &a->full : &a->quick) = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--workloads", &a->workloads)) ||
                   (r = cli_option_value(argc, argv, &i, "--backends", &a->backends)) ||
                   (r = cli_option_value(argc, argv, &i, "--sizes", &a->sizes)) ||
                   (r = cli_option_value(argc, argv, &i, "--sweep", &a->sweep)) ||
                   (r = cli_option_value(argc, argv, &i, "--out", &a->out)) ||
                   (r = cli_option_value(argc, argv, &i, "--svg-dir", &a->svg_dir))) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a value", arg);
        } else if ((r = cli_option_value(argc, argv, &i, "--ticks", &v)) != 0) {
            if (r < 0 || (strcmp(v, "on") != 0 && strcmp(v, "off") != 0))
                return cli_usage_error(PROGRAM, "--ticks needs 'on' or 'off'");
            a->ticks = strcmp(v, "on") == 0;
        } else if ((r = cli_option_value(argc, argv, &i, "--threads", &v)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a value", arg);
            if (parse_threads(v, a))
                return CLI_EXIT_USAGE;
        } else if ((r = cli_option_value(argc, argv, &i, "--rounds", &v)) != 0) {
            a->rounds = r > 0 && *v >= '0' && *v <= '9' ? strtoul(v, &end, 10) : 0;
            if (a->rounds < 1 || a->rounds > BENCH_MAX_ROUNDS || *end)
                return cli_usage_error(PROGRAM, "--rounds needs a number from 1 to %d",
                                       BENCH_MAX_ROUNDS);
        } else if ((r = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            a->seed = r > 0 && *v >= '0' && *v <= '9' ? strtoull(v, &end, 0) : 0;
            if (!end || *end)
                return cli_usage_error(PROGRAM, "--seed needs a decimal or 0x number");
        } else {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        }
    }
    if (a->full && a->quick)
        return cli_usage_error(PROGRAM, "--full and --quick exclude each other");
    return -1;
}

static char backend_names[BENCH_MAX_BACKENDS][64]; /* see replay_config() */
static const char *backends[BENCH_MAX_BACKENDS];
static size_t backend_count;

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds a backend's name unless it is listed already; 0, or -1 when full. */
static int add_backend(const char *name)
{
    for (size_t b = 0; b < backend_count; b++)
        if (strcmp(backends[b], name) == 0)
            return 0;
    if (backend_count == BENCH_MAX_BACKENDS || strlen(name) >= sizeof backend_names[0])
        return -1;
    backends[backend_count] = strcpy(backend_names[backend_count], name);
    backend_count++;
    return 0;
}

/* The backends of --backends, or every NAME.so where the library looks.
 * Returns -1, or an exit status after a message. */
static int find_backends(const args *a)
{
    char name[256], dir[4096];
    const char *path = getenv("PERCEPT_PLUGIN_PATH"), *list = a->backends;
    while (next_item(&list, ',', name, sizeof name))
        if (add_backend(name))
            return cli_usage_error(PROGRAM, "--backends: at most %d names of up to 63 bytes",
                                   BENCH_MAX_BACKENDS);
    for (int last = 0; !a->backends && !last;) {
        last = !next_item(&path, ':', dir, sizeof dir);
        DIR *d = opendir(last ? PERCEPT_PLUGIN_DIR : dir);
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t n = strlen(e->d_name);
            snprintf(name, sizeof name, "%.*s", (int)(n > 3 ? n - 3 : 0), e->d_name);
            if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0 && cli_backend_name_ok(name))
                add_backend(name);
        }
        if (d)
            closedir(d);
    }
    qsort(backends, a->backends ? 0 : backend_count, sizeof backends[0], compare_names);
    if (backend_count == 0)
        return cli_usage_error(PROGRAM, "no backend: set PERCEPT_PLUGIN_PATH to a directory of "
                                        "plugins, or give --backends");
    return -1;
}

static case_plan plans[MAX_CASES];
static size_t plan_count;

/* Opens a world of each backend, and of the reference when a case needs it:
 * a backend that cannot load is said before anything is timed. */
static int check_backends(void)
{
    int reference = 0;
    for (size_t i = 0; i < plan_count; i++)
        reference |= plans[i].n <= BENCH_REFERENCE_LIMIT;
    for (size_t b = 0; b < backend_count; b++)
        reference &= strcmp(backends[b], BENCH_REFERENCE) != 0;
    for (size_t b = 0; b < backend_count + (size_t)reference; b++) {
        const char *name = b < backend_count ? backends[b] : BENCH_REFERENCE;
        percept_error err;
        if (replay_check_backend(name, &err) != PERCEPT_OK) {
            fprintf(stderr, PROGRAM ": %s: %s\n", name, err.text);
            return CLI_EXIT_USAGE;
        }
    }
    return -1;
}

/* The case of `workload` at n, made if it is new. Fewer ticks as worlds
 * grow, so that a replay runs a few hundred thousand operations at most;
 * more rounds in small cases, so that a shared machine's slow spells do not
 * decide their median. */
static case_plan *plan_case(const char *workload, size_t n, const args *a)
{
    for (size_t i = 0; i < plan_count; i++)
        if (plans[i].n == n && strcmp(plans[i].workload, workload) == 0)
            return &plans[i];
    case_plan *c = &plans[plan_count++];
    *c = (case_plan){.workload = workload, .n = n};
    c->ticks = a->quick ? 3 : n <= 2000 ? 10 : n <= 5000 ? 5 : n <= 20000 ? 3 : n <= 70000 ? 2 : 1;
    c->rounds = a->rounds     ? a->rounds
                : a->quick    ? 1
                : n <= 2000   ? 11
                : n <= 20000  ? 3
                : n <= 300000 ? 2
                              : 1;
    c->warmup = !a->quick && n <= 20000;
    c->move_limit = !a->full && n > MOVE_LIMIT_ABOVE ? MOVE_LIMIT : 0;
    c->ticked = a->ticks;
    c->thread_count = a->thread_count;
    memcpy(c->threads, a->threads, sizeof c->threads);
    return c;
}

static int compare_plans(const void *pa, const void *pb)
{
    const case_plan *a = pa, *b = pb;
    size_t wa = bench_workload_index(a->workload), wb = bench_workload_index(b->workload);
    return wa != wb ? (wa < wb ? -1 : 1) : (a->n > b->n) - (a->n < b->n);
}

static int make_plan(const args *a)
{
    size_t sizes[2 * MAX_SIZES];
    const char *size_list = a->sizes   ? a->sizes
                            : a->quick ? "300"
                            : a->full  ? "1k,10k,100k"
                                       : "1k,10k";
    const char *sweep_list = a->sweep ? a->sweep : a->quick ? "300,1200" : "1k,4k,16k,64k,256k";
    int ns = parse_counts("--sizes", size_list, sizes), nw = 0;
    if (ns < 0 || (strcmp(sweep_list, "none") != 0 &&
                   (nw = parse_counts("--sweep", sweep_list, sizes + ns)) < 0))
        return CLI_EXIT_USAGE;
    char name[64];
    int chosen[16] = {0}; /* by workload index */
    for (const char *list = a->workloads; next_item(&list, ',', name, sizeof name);) {
        size_t w = bench_workload_index(name);
        if (w == bench_workload_count)
            return cli_usage_error(PROGRAM, "--workloads: unknown workload '%s'", name);
        chosen[w] = 1;
    }
    for (size_t w = 0; w < bench_workload_count; w++) {
        const char *workload = bench_workloads[w].name;
        int walk = strcmp(workload, "uniform_walk") == 0;
        for (int i = 0; i < ns + nw * walk && (chosen[w] || !a->workloads); i++)
            plan_case(workload, sizes[i], a)->in_sweep |= i >= ns;
    }
    if (plan_count == 0)
        return cli_usage_error(PROGRAM, "nothing to run");
    qsort(plans, plan_count, sizeof plans[0], compare_plans);
    return -1;
}

/* Writes the chart, with --out or --svg-dir, and the report, with --out.
 * Returns 0, or -1 after a message. */
static int write_outputs(const args *a, bench_report *r)
{
    char chart[4200];
    const char *slash = a->out ? strrchr(a->out, '/') : NULL;
    int dir_len = a->svg_dir ? (int)strlen(a->svg_dir) : slash ? (int)(slash - a->out) : 1;
    snprintf(chart, sizeof chart, "%.*s/bench-scaling.svg", dir_len,
             a->svg_dir ? a->svg_dir
             : slash    ? a->out
                        : ".");
    for (size_t i = 0; i < r->count && (a->svg_dir || a->out) && !r->chart; i++)
        if (r->cases[i].plan.in_sweep)
            r->chart = a->svg_dir ? chart : "bench-scaling.svg";
    if (r->chart && report_write_chart(chart, r)) {
        fprintf(stderr, PROGRAM ": cannot write the chart %s\n", chart);
        return -1;
    }
    FILE *f = a->out ? fopen(a->out, "w") : NULL;
    int bad = a->out && (!f || report_write_markdown(f, r) != 0);
    bad |= f && fclose(f) != 0;
    if (bad)
        fprintf(stderr, PROGRAM ": cannot write the report %s\n", a->out);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0 || (rc = make_plan(&a)) >= 0 || (rc = find_backends(&a)) >= 0 ||
        (rc = check_backends()) >= 0)
        return rc;
    case_result *results = calloc(plan_count, sizeof *results);
    double start = cli_now_seconds();
    int failed = 0;
    report_print_header(stdout, a.threads, a.ticks ? a.thread_count : 0);
    for (size_t i = 0; i < plan_count; i++) {
        const case_plan *p = &plans[i];
        char threads[128] = "";
        for (size_t t = 0, len = 0; p->ticked && t < p->thread_count && len < sizeof threads; t++)
            len += (size_t)snprintf(threads + len, sizeof threads - len, "%s%zu",
                                    t ? ", " : ", also tick by tick on ", p->threads[t]);
        fprintf(stderr, "[%4.0fs] %s N=%zu: ticks 0 to %zu, rounds: %zu%s%s\n",
                cli_now_seconds() - start, p->workload, p->n, p->ticks, p->rounds, threads,
                !p->ticked                                   ? ""
                : p->thread_count == 1 && p->threads[0] == 1 ? " thread"
                                                             : " threads");
        if (!results || suite_run(&results[i], p, backends, backend_count, a.seed, stderr)) {
            fprintf(stderr, PROGRAM ": out of memory\n");
            free(results);
            return 1;
        }
        report_print_case(stdout, &results[i]);
        failed |= results[i].failed;
    }
    /* The command line as the report shows it, without the options naming files. */
    char command[2048] = PROGRAM, verdict[512];
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--out", 5) == 0 || strncmp(argv[i], "--svg-dir", 9) == 0)
            i += strchr(argv[i], '=') == NULL;
        else if (strlen(command) + strlen(argv[i]) + 2 < sizeof command)
            strcat(strcat(command, " "), argv[i]);
    bench_report r = {results, plan_count, command, a.seed, cli_now_seconds() - start, NULL};
    failed |= write_outputs(&a, &r) != 0;
    report_verdict(&r, verdict, sizeof verdict);
    fprintf(stderr, PROGRAM ": %s, in %.0f s\n", verdict, r.seconds);
    report_homemade_verdict(&r, verdict, sizeof verdict);
    if (verdict[0])
        fprintf(stderr, PROGRAM ": %s\n", verdict);
    free(results);
    return failed ? 1 : 0;
}
