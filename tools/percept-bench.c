/*
 * percept-bench - the reference benchmark of percept: named workloads
 * replayed against every backend side by side, checked against brute force,
 * written up as docs/BENCHMARKS.md with SVG charts; or a user's own trace
 * (--trace) replayed and checked the same way.
 *
 * This file holds the command line and the plan of the run; the workloads,
 * the replay, the checks and the report live in tools/bench/.
 */
#define _POSIX_C_SOURCE 200809L

#include <percept.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/machine.h"
#include "bench/plugin_search.h"
#include "bench/replay.h"
#include "bench/report.h"
#include "bench/stats.h"
#include "bench/suite.h"
#include "bench/targets.h"
#include "bench/trace.h"
#include "bench/tuning.h"
#include "bench/workload.h"

#include "cli.h"
#include "install_dirs.h" /* written by make: the configured paths */

#define PROGRAM "percept-bench"

/* The exit status when events differ or a replay fails; bad usage is CLI_EXIT_USAGE. */
enum { EXIT_MISMATCH = 1 };

#define MAX_SIZES 16
#define MAX_CASES 256
/* A backend's name goes on the "backend = NAME" lines of its worlds'
 * configuration, and the library reads lines of up to 198 characters
 * (GUARANTEES.md, "Limits"): a longer name would fail every case. */
#define BACKEND_NAME_MAX (198 - (int)(sizeof "backend = " - 1))
#define DEFAULT_SEED 20240611u
/* Under five minutes for the whole run; the batched twins take about a third of it. */
#define DEFAULT_BUDGET 270.0
#define DEFAULT_MAX_REPLAY 30.0
#define DEFAULT_MOVE_LIMIT 50000
#define MOVE_LIMIT_ABOVE 20000 /* worlds larger than this replay DEFAULT_MOVE_LIMIT moves */
/* Every case of at most this many entities is checked against bruteforce, run untimed
 * when it is not among --backends; above, the backends are checked against each other. */
#define REFERENCE_LIMIT 10000
/* A trace is checked against bruteforce while it never holds more entities than this:
 * bruteforce then replays all of it, or none of it above. */
#define TRACE_REFERENCE_LIMIT REFERENCE_LIMIT

typedef struct args {
    int full, quick;
    int batched; /* also run the batched twins (CASE_BATCHED) */
    const char *workloads, *backends, *sizes, *sweep, *out, *svg_dir, *notes;
    const char *label; /* --label TEXT: what was measured, shown in the report */
    const char *trace; /* --trace FILE: benchmark this trace instead of the workloads */
    /* The options --trace excludes, as given (NULL if not): named in the usage error. */
    const char *given_batched, *given_seed;
    size_t rounds;     /* 0: by size */
    double budget;     /* seconds for the whole run; < 0: the default */
    double max_replay; /* seconds per replay; < 0: the default */
    uint64_t seed;
    unsigned seen;       /* the options with a value given so far (cli_once) */
    bench_params params; /* --param BACKEND.KEY=VALUE, each checked as it was read */
} args;

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

/* Lists the workloads after `lead`, wrapped like the rest of the help. */
static void print_workloads(FILE *out, const char *lead)
{
    size_t col = strlen(lead);
    fputs(lead, out);
    for (size_t w = 0; w < bench_workload_count; w++) {
        const char *name = bench_workloads[w].name;
        size_t len = strlen(name) + (w + 1 == bench_workload_count); /* the final '.' */
        if (col + 1 + len > 84) { /* as wide as the help's longest lines */
            fputc('\n', out);
            col = 0;
        } else if (w > 0) {
            fputc(' ', out);
            col++;
        }
        fputs(name, out);
        col += len;
    }
    fputs(".\n", out);
}

static void print_usage(FILE *out)
{
    fputs("Usage: " PROGRAM " [OPTION]...\n"
          "       " PROGRAM " --trace FILE [--backends LIST] [OPTION]...\n"
          "\n"
          "Replay named workloads against every percept backend side by side, check that\n"
          "all of them deliver the same events as brute force, and write a Markdown report\n"
          "with SVG charts. With --trace, replay your own game's trace (docs/trace-format.md)\n"
          "the same way instead, and report on it alone.\n"
          "\n"
          "Up to 10000 entities every backend's events are checked against bruteforce's,\n"
          "whatever the order of --backends; when bruteforce is not listed it is replayed\n"
          "anyway, once per case and untimed, as the reference, and is not in the tables.\n"
          "Above that, a backend is wrong when a strict majority of the backends agree on\n"
          "other events; without a majority the backends disagree and none is blamed.\n"
          "\n"
          "Options:\n"
          "  --trace FILE       benchmark the trace FILE ('-': standard input): it is loaded\n"
          "                     whole before any timing, and a line percept-replay would\n"
          "                     refuse, or an ID not in the world, ends the run (exit 2).\n"
          "                     Every add is a new entity; add, move, remove, range, hide\n"
          "                     and show are timed apart. A trace has no ticks: tick 0 is\n"
          "                     its leading adds (the warm-up), the rest is cut into slices\n"
          "                     where events are compared, each as long as the largest of:\n"
          "                     the leading adds, the most entities alive at once, 1024\n"
          "                     operations; no tick latency, targets or charts are\n"
          "                     reported (--svg-dir is ignored). Every sense gets one\n"
          "                     cell size: the largest of the senses' median ranges.\n"
          "                     Excludes --workloads, --sizes, --sweep, --full, --quick,\n"
          "                     --batched and --seed; --out must not be the trace\n"
          "  --full             add 100k entities to every workload and a 1M-entity memory run\n"
          "  --quick            tiny sizes and one round: a smoke test of a few seconds, too\n"
          "                     small to judge the targets by (they are shown, not judged)\n"
          "  --workloads LIST   comma-separated workloads, each named once (default: all)\n"
          "  --backends LIST    comma-separated backends, each named once, at most 16\n"
          "                     (default: every NAME.so found where the library looks:\n"
          "                     each directory of PERCEPT_PLUGIN_PATH, then " PERCEPT_PLUGIN_DIR
          ";\n"
          "                     the first directory holding NAME.so wins)\n"
          "  --param BACKEND.KEY=VALUE  set KEY = VALUE in every sense section of the worlds\n"
          "                     of BACKEND, one of the backends run, in every case; for the\n"
          "                     size percept-bench tunes (cell_size of grid and hashgrid,\n"
          "                     tower_size of tower) VALUE replaces the tuned one. KEY:\n"
          "                     letters, digits, '_' and '-', up to 63 bytes, not backend\n"
          "                     or observer_cell_size; VALUE: 1 to 100 bytes, one line,\n"
          "                     no ';', no blank at either end. Up to 32 --param options,\n"
          "                     each BACKEND.KEY once; a setting the backend refuses ends\n"
          "                     the run before it starts (exit 2)\n"
          "  --sizes LIST       entity counts of the workload tables, at most 16, each 1 to\n"
          "                     100M and given once (1k and 1000 are one size); suffixes k\n"
          "                     or K, M or m (default 1k,10k; 1k,10k,100k with --full, 300\n"
          "                     with --quick)\n"
          "  --sweep LIST       sizes of the constant-density sweep, as --sizes (default\n"
          "                     1k,4k,16k,64k,256k; 300,1200 with --quick; 'none' to skip it)\n"
          "  --batched on|off   also replay uniform_walk and teleport at every size, and the\n"
          "                     sweep, with each tick's moves in one percept_move_many call\n"
          "                     (default on)\n"
          "  --rounds N         measured rounds per case, 1 to 16 (default: 11 up to 2k\n"
          "                     entities, 3 up to 20k, 2 up to 300k, 1 above)\n"
          "  --budget SECONDS   time for the whole run, 0 to 1000000 (default 270; 0: no\n"
          "                     limit, the default with --full and --quick): every case gets\n"
          "                     a share in proportion to its entities plus operations\n"
          "                     (four times that for uniform_walk and teleport at 10k,\n"
          "                     the targets' cases), and runs fewer rounds (at least one)\n"
          "                     when a next round would overrun it\n"
          "  --max-replay SECONDS  stop a backend's replay after this long, 0 to 1000000\n"
          "                     (default 30, 600 with --full; 0: no limit) and skip that\n"
          "                     backend at the workload's larger sizes; skip it at once\n"
          "                     where its times at smaller sizes predict a replay over\n"
          "                     1.5 times the limit\n"
          "  --seed N           the workloads' seed, 0 to 2^64-1, decimal or 0x\n"
          "                     hexadecimal (default 20240611)\n"
          "  --out FILE         write the Markdown report to FILE, and the charts beside it\n"
          "                     when FILE is a regular file (default, or '-': the report to\n"
          "                     standard output; no charts then unless --svg-dir is given)\n"
          "  --svg-dir DIR      write the charts to DIR, which must exist (default: FILE's\n"
          "                     directory)\n"
          "  --notes FILE       append FILE, a hand-written analysis, to the report (FILE\n"
          "                     must not be --out's)\n"
          "  --label TEXT       say in the report what was measured, beside the library's\n"
          "                     version: a commit, a build (one line, up to " BENCH_LABEL_MAX_TEXT
          " bytes;\n"
          "                     'make bench' gives the source tree's commit)\n"
          "  --version          print the version and exit\n"
          "  -h, --help         print this help and exit\n"
          "\n"
          "At most 256 cases in all (a workload at one size is a case; the sweep's sizes\n"
          "and the batched replays add more). The report file and the chart directory are\n"
          "checked for writing before anything runs.\n"
          "\n",
          out);
    print_workloads(out, "Workloads: ");
    fputs("\n"
          "Environment: PERCEPT_PLUGIN_PATH, colon-separated directories of NAME.so\n"
          "backends (ignored, as by the library, when percept-bench runs set-user-ID or\n"
          "set-group-ID); PERCEPT_BENCH_NO_FORK=1 replays inside this process instead of a\n"
          "child, for profilers that do not follow fork(): the report then says so and\n"
          "gives no memory figures (not measured), and --max-replay stops no replay (it\n"
          "only skips, as predicted).\n"
          "\n"
          "Exit status: 0 when the events of every backend that completed a replay match\n"
          "the reference (or, above 10000 entities, the majority's); a backend skipped as\n"
          "too slow (--max-replay) is not checked where it was skipped, which the last\n"
          "line and the report say (NOT checked), and the status stays 0. 1 when a\n"
          "backend's events do not match, the backends disagree without a majority, a\n"
          "backend's events were compared with no other replay's (a backend alone above\n"
          "10000 entities), a replay fails, no backend completes a replay, or the report\n"
          "or a chart cannot be written at the end. 2 on bad usage, no backend found, a\n"
          "--param setting its backend refuses, bruteforce.so missing where a case needs\n"
          "it as the reference, a --trace FILE that cannot be read or has a fault\n"
          "(FILE:LINE: ...), a --notes FILE that cannot be read, or when the report or\n"
          "the chart directory cannot be written at the start.\n",
          out);
}

/* A count with an optional k or M suffix; 0 on error. */
static size_t parse_count(const char *s)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') /* strtoull would take a sign or leading spaces */
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    if (*end == 'k' || *end == 'K') {
        v *= 1000;
        end++;
    } else if (*end == 'M' || *end == 'm') {
        v *= 1000000;
        end++;
    }
    if (*end != '\0' || v > 100000000ull)
        return 0;
    return (size_t)v;
}

/*
 * Splits `list`, the value of option `opt`, into counts; returns how many, or
 * -1 after a usage error naming the option and the bad item. The list has no
 * empty items (check_list()).
 */
static int parse_counts(const char *opt, const char *list, size_t out[MAX_SIZES])
{
    char buf[512];
    const char *spelled[MAX_SIZES]; /* each count as given, within buf */
    size_t n = 0;
    if (strlen(list) >= sizeof buf) {
        cli_usage_error(PROGRAM, "%s: the list is too long", opt);
        return -1;
    }
    strcpy(buf, list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        size_t v = parse_count(tok);
        if (!v) {
            cli_usage_error(PROGRAM,
                            "%s: '%s' is not an entity count from 1 to 100M (digits, "
                            "then optionally k or M)",
                            opt, tok);
            return -1;
        }
        /* A size given twice, however written ("1k,1000"), is a slip: the run would
         * merge the two silently, and the list would count one size twice. */
        for (size_t j = 0; j < n; j++) {
            if (out[j] != v)
                continue;
            if (strcmp(spelled[j], tok) == 0)
                cli_usage_error(PROGRAM, "%s: '%s' is given twice", opt, tok);
            else
                cli_usage_error(PROGRAM, "%s: '%s' is given twice (first as '%s')", opt, tok,
                                spelled[j]);
            return -1;
        }
        if (n == MAX_SIZES) {
            cli_usage_error(PROGRAM, "%s: at most %d sizes", opt, MAX_SIZES);
            return -1;
        }
        spelled[n] = tok;
        out[n++] = v;
    }
    return (int)n;
}

/* Whether `name`, `len` bytes, is an item of the comma-separated `list` before
 * its offset `end`: a name given twice in a list is a slip, which the run would
 * merge silently (and a list of 17 names could then pass for 16 backends). */
static int listed_before(const char *list, size_t end, const char *name, size_t len)
{
    for (const char *p = list; (size_t)(p - list) < end;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, name, len) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* A comma-separated list must have items, none of them empty: "a,,b" or "a," is
 * more likely a typo than a wish, and strtok() would skip the empty item silently. */
static int check_list(const char *opt, const char *list)
{
    size_t len = list ? strlen(list) : 1;
    if (len == 0)
        return cli_usage_error(PROGRAM, "%s needs a comma-separated list, not ''", opt);
    if (list && (list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,")))
        return cli_usage_error(PROGRAM, "%s: empty item in '%s'", opt, list);
    return -1;
}

/* Replaces each control character of `s` with '?': a message that quotes a
 * --param as given must stay one line that a terminal shows as it is. */
static void mask_controls(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* Adds --param's value `text` to a->params. Returns -1, or a usage error's exit status. */
static int add_param(args *a, const char *text)
{
    char why[512], shown[256];
    if (bench_params_add(&a->params, text, why, sizeof why) == 0)
        return -1;
    /* A long text is cut: the reason names what is wrong with it. */
    snprintf(shown, sizeof shown, "%.200s%s", text, strlen(text) > 200 ? "..." : "");
    mask_controls(shown);
    mask_controls(why);
    return cli_usage_error(PROGRAM, "--param %s: %s", shown, why);
}

/* The options that take one value: each may be given once. */
static const char *const single_value_options[] = {
    "--workloads", "--backends", "--sizes",  "--sweep",  "--out",        "--svg-dir", "--notes",
    "--trace",     "--batched",  "--rounds", "--budget", "--max-replay", "--seed",    "--label",
};

/* -1, or a usage error's exit status when `arg` repeats an option with a value. */
static int check_repeat(args *a, const char *arg)
{
    size_t len = strcspn(arg, "=");
    size_t n = sizeof single_value_options / sizeof single_value_options[0];
    for (size_t k = 0; k < n; k++)
        if (strlen(single_value_options[k]) == len &&
            strncmp(arg, single_value_options[k], len) == 0)
            return cli_once(PROGRAM, &a->seen, (unsigned)k, single_value_options[k]);
    return -1;
}

/* Why `label` cannot go into the report's table (NULL: it can). A line of
 * text: a control character would end or garble the table's row. */
static const char *label_fault(const char *label)
{
    size_t len = strlen(label);
    if (len == 0)
        return "needs a text (the code measured, say: a commit)";
    if (len > BENCH_LABEL_MAX)
        return "is longer than " BENCH_LABEL_MAX_TEXT " bytes";
    for (const unsigned char *c = (const unsigned char *)label; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return "must be one line of text, without control characters";
    return NULL;
}

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->seed = DEFAULT_SEED;
    a->batched = 1;
    a->budget = -1;
    a->max_replay = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int r = check_repeat(a, arg);
        if (r >= 0)
            return r;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage(stdout);
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (cli_version(PROGRAM, arg)) {
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--full") == 0) {
            a->full = 1;
        } else if (strcmp(arg, "--quick") == 0) {
            a->quick = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--workloads", &a->workloads)) ||
                   (r = cli_option_value(argc, argv, &i, "--backends", &a->backends)) ||
                   (r = cli_option_value(argc, argv, &i, "--sizes", &a->sizes)) ||
                   (r = cli_option_value(argc, argv, &i, "--sweep", &a->sweep))) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a value", arg);
        } else if ((r = cli_option_value(argc, argv, &i, "--out", &v)) ||
                   (r = cli_option_value(argc, argv, &i, "--svg-dir", &v)) ||
                   (r = cli_option_value(argc, argv, &i, "--notes", &v)) ||
                   (r = cli_option_value(argc, argv, &i, "--trace", &v))) {
            /* The option's name, without "=VALUE". */
            int len = (int)strcspn(arg, "=");
            if (r < 0 || !*v)
                return cli_usage_error(PROGRAM, "option '%.*s' needs a %s", len, arg,
                                       strncmp(arg, "--svg-dir", 9) == 0 ? "directory"
                                                                         : "file name");
            if (strncmp(arg, "--out", 5) == 0)
                a->out = v;
            else if (strncmp(arg, "--svg-dir", 9) == 0)
                a->svg_dir = v;
            else if (strncmp(arg, "--trace", 7) == 0)
                a->trace = v;
            else
                a->notes = v;
        } else if ((r = cli_option_value(argc, argv, &i, "--label", &v)) != 0) {
            const char *why = r < 0 ? "needs a value" : label_fault(v);
            if (why)
                return cli_usage_error(PROGRAM, "--label %s", why);
            a->label = v;
        } else if ((r = cli_option_value(argc, argv, &i, "--param", &v)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "--param needs a setting, BACKEND.KEY=VALUE");
            if ((r = add_param(a, v)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--batched", &v)) != 0) {
            if (r < 0 || (strcmp(v, "on") != 0 && strcmp(v, "off") != 0))
                return cli_usage_error(PROGRAM, "--batched needs 'on' or 'off', not '%s'",
                                       r > 0 ? v : "");
            a->batched = strcmp(v, "on") == 0;
            a->given_batched = "--batched";
        } else if ((r = cli_option_value(argc, argv, &i, "--rounds", &v)) != 0) {
            size_t n = r > 0 ? parse_count(v) : 0;
            if (!n || n > BENCH_MAX_ROUNDS)
                return cli_usage_error(PROGRAM, "--rounds needs a number from 1 to %d, not '%s'",
                                       BENCH_MAX_ROUNDS, r > 0 ? v : "");
            a->rounds = n;
        } else if ((r = cli_option_value(argc, argv, &i, "--budget", &v)) != 0 ||
                   (r = cli_option_value(argc, argv, &i, "--max-replay", &v)) != 0) {
            const char *opt = strncmp(arg, "--budget", 8) == 0 ? "--budget" : "--max-replay";
            char *end = NULL;
            errno = 0;
            /* A plain decimal, as the other tools read numbers: strtod alone
             * would take leading blanks, hex and "inf". */
            int plain = r > 0 && ((*v >= '0' && *v <= '9') || *v == '.') &&
                        strspn(v, "0123456789.eE+-") == strlen(v);
            double b = plain ? strtod(v, &end) : -1;
            if (!plain || errno || end == v || *end != '\0' || !(b >= 0) || b > 1e6)
                return cli_usage_error(PROGRAM,
                                       "%s needs a number of seconds from 0 to 1000000, not '%s'",
                                       opt, r > 0 ? v : "");
            if (opt[2] == 'b')
                a->budget = b;
            else
                a->max_replay = b;
        } else if ((r = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            char *end;
            errno = 0;
            /* strtoull would take a sign (and wrap "-1" around) or leading spaces. */
            int digit = r > 0 && *v >= '0' && *v <= '9';
            /* Decimal, or 0x hexadecimal; not base 0, which reads "010" as octal 8. */
            int hex = digit && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
            unsigned long long s = digit ? strtoull(v, &end, hex ? 16 : 10) : 0;
            if (!digit || errno || *end != '\0')
                return cli_usage_error(PROGRAM, "--seed needs a number from 0 to 2^64-1, not '%s'",
                                       r > 0 ? v : "");
            a->seed = s;
            a->given_seed = "--seed";
        } else if (arg[0] == '-') {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(PROGRAM, "unexpected argument '%s': every option starts with --",
                                   arg);
        }
    }
    if (a->full && a->quick)
        return cli_usage_error(PROGRAM, "%s", "--full and --quick exclude each other");
    if (a->trace) {
        /* A trace is its own workload, at its own size, replayed as it is. */
        const char *other = a->workloads       ? "--workloads"
                            : a->sizes         ? "--sizes"
                            : a->sweep         ? "--sweep"
                            : a->full          ? "--full"
                            : a->quick         ? "--quick"
                            : a->given_batched ? a->given_batched
                                               : a->given_seed;
        if (other)
            return cli_usage_error(PROGRAM, "--trace and %s exclude each other", other);
    }
    int rc;
    if ((rc = check_list("--workloads", a->workloads)) >= 0 ||
        (rc = check_list("--backends", a->backends)) >= 0 ||
        (rc = check_list("--sizes", a->sizes)) >= 0 || (rc = check_list("--sweep", a->sweep)) >= 0)
        return rc;
    return -1;
}

/* Whether `a` and `b` are one regular file (through another path or a link):
 * then writing one destroys the other. "-" as `a` is standard input. Only
 * regular files count: /dev/stdin and /dev/stdout may well be one terminal. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ra = strcmp(a, "-") == 0 ? fstat(STDIN_FILENO, &sa) : stat(a, &sa);
    return ra == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode) &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * The report (--out FILE, written as FILE.tmp and renamed over FILE, and
 * probed that way before the run) must not land on the trace or the notes:
 * they are the user's, and would be lost. Returns -1, or a usage error's exit
 * status. Runs before anything is written.
 */
static int check_outputs_distinct(const args *a)
{
    const char *input[2] = {a->trace, a->notes}, *opt[2] = {"--trace", "--notes"};
    char tmp[PATH_MAX], what[PATH_MAX + 32];
    if (!a->out || strcmp(a->out, "-") == 0)
        return -1;
    int tmp_ok = (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", a->out) < sizeof tmp;
    for (int i = 0; i < 2; i++) {
        if (!input[i])
            continue;
        if (strcmp(input[i], "-") == 0)
            snprintf(what, sizeof what, "standard input (%s -)", opt[i]);
        else
            snprintf(what, sizeof what, "%s '%.*s'", opt[i], PATH_MAX, input[i]);
        if (same_file(input[i], a->out))
            return cli_usage_error(PROGRAM,
                                   "--out '%s' is the file of %s: the report would overwrite it; "
                                   "write the report elsewhere",
                                   a->out, what);
        if (tmp_ok && same_file(input[i], tmp))
            return cli_usage_error(PROGRAM,
                                   "--out '%s' is written through '%s', the file of %s, which it "
                                   "would overwrite; write the report elsewhere",
                                   a->out, tmp, what);
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Backends                                                                  */

/*
 * Fills *l with the backends to run: those of --backends, each of which must
 * be found now (an unknown name is bad usage, not a run full of failures), or
 * every one found. Returns -1, or an exit status after a message.
 */
static int find_backends(const args *a, const search_path *s, name_list *l)
{
    char dirs[1024], found[2048];
    name_list all;
    memset(l, 0, sizeof *l);
    memset(&all, 0, sizeof all);
    search_all(s, &all);
    list_sort(&all);
    list_describe(s, &all, found, sizeof found);
    search_describe(s, dirs, sizeof dirs);
    /* A set-ID bench searches what its worlds will: not the caller's directories. */
    const char *ignored = s->env_ignored ? "; " SEARCH_ENV_IGNORED : "";
    int rc = -1;
    if (a->backends) {
        const char *p = a->backends;
        while (*p && rc < 0) {
            size_t len = strcspn(p, ",");
            char name[BACKEND_NAME_MAX + 1];
            const char *dir;
            if (len > BACKEND_NAME_MAX) {
                rc = cli_usage_error(PROGRAM,
                                     "--backends: the name '%.20s...' is %zu characters; a "
                                     "backend's name goes on a line of its worlds' configuration, "
                                     "which holds at most %d",
                                     p, len, BACKEND_NAME_MAX);
                break;
            }
            memcpy(name, p, len);
            name[len] = '\0';
            if (!cli_backend_name_ok(name))
                rc = cli_usage_error(
                    PROGRAM, "--backends: bad backend name '%s': letters, digits, '_' and '-' only",
                    name);
            else if (listed_before(a->backends, (size_t)(p - a->backends), name, len))
                rc = cli_usage_error(PROGRAM, "--backends: '%s' is given twice", name);
            else if (!(dir = search_find(s, name)))
                rc = cli_usage_error(PROGRAM,
                                     "--backends: no backend '%s': %s.so is in none of %s "
                                     "(PERCEPT_PLUGIN_PATH, then the install directory); found: "
                                     "%s%s",
                                     name, name, dirs, found, ignored);
            else if (list_add(l, name, dir))
                rc =
                    cli_usage_error(PROGRAM, "--backends: at most %d backends", BENCH_MAX_BACKENDS);
            p += len + (p[len] == ',');
        }
    } else if (all.count == 0) {
        fprintf(stderr, PROGRAM ": no backend plugins (NAME.so) in %s; %s\n", dirs,
                s->env_ignored ? SEARCH_ENV_IGNORED
                               : "set PERCEPT_PLUGIN_PATH to the directory holding them");
        rc = CLI_EXIT_USAGE;
    } else {
        *l = all; /* takes the names */
        return -1;
    }
    list_free(&all);
    if (rc >= 0)
        list_free(l);
    return rc;
}

/*
 * Every --param must name a backend of this run (those of --backends, or
 * every one found): a setting for one that does not run would be dropped
 * without a word. Returns -1, or a usage error's exit status.
 */
static int check_param_backends(const args *a, const name_list *backends)
{
    for (size_t i = 0; i < a->params.count; i++) {
        const bench_param *p = &a->params.p[i];
        size_t b = 0;
        while (b < backends->count && !bench_param_is_for(p, backends->names[b]))
            b++;
        if (b < backends->count)
            continue;
        char names[BENCH_MAX_BACKENDS * 258] = "";
        for (b = 0; b < backends->count; b++) {
            strcat(names, b ? ", " : "");
            strncat(names, backends->names[b], 255);
        }
        return cli_usage_error(
            PROGRAM, "--param %s: backend '%.*s' is not among this run's backends (%s: %s)",
            p->text, (int)p->backend_len, p->text, a->backends ? "--backends" : "found", names);
    }
    return -1;
}

/* Whether --param gives `backend` a setting. */
static int has_params(const args *a, const char *backend)
{
    for (size_t i = 0; i < a->params.count; i++)
        if (bench_param_is_for(&a->params.p[i], backend))
            return 1;
    return 0;
}

/* Says which --param options `err`, the library's refusal of `backend`'s
 * world, is about: the one of the key it names, else all of that backend's. */
static void print_refused(const args *a, const char *backend, const percept_error *err)
{
    const bench_param *blamed = bench_params_find(&a->params, backend, err->key);
    char label[300], why[sizeof err->text + sizeof label + 200];
    const char *sep = "";
    fprintf(stderr, PROGRAM ": ");
    for (size_t i = 0; i < a->params.count; i++) {
        const bench_param *p = &a->params.p[i];
        if (blamed ? p == blamed : bench_param_is_for(p, backend)) {
            fprintf(stderr, "%s--param %s", sep, p->text);
            sep = ", ";
        }
    }
    bench_tuning_label(label, sizeof label, backend);
    bench_tuning_open_error(why, sizeof why, err, label);
    fprintf(stderr, ": %s\n", why);
}

/*
 * Opens a world of each backend --param gives settings to, configured as
 * its replays will be: a setting the backend refuses (a key it does not
 * take, a bad value) is bad usage, said once before anything runs rather
 * than in every replay. A backend that fails without its settings as well
 * is left to the run, which reports it as it does any backend that fails.
 * Returns -1, or exit status 2 after the library's message.
 */
static int check_params_accepted(const args *a, const name_list *backends)
{
    for (size_t b = 0; b < backends->count; b++) {
        const char *name = backends->names[b];
        percept_error err, bare;
        if (!has_params(a, name) || bench_tuning_try(name, &a->params, &err) == 0)
            continue;
        if (!bench_params_find(&a->params, name, err.key) && bench_tuning_try(name, NULL, &bare))
            continue;
        print_refused(a, name, &err);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* The plan                                                                  */

/* Fewer ticks as worlds grow: every size replays a few hundred thousand operations at most. */
static size_t ticks_for(size_t n, int quick)
{
    if (quick)
        return 3;
    return n <= 2000 ? 10 : n <= 5000 ? 5 : n <= 20000 ? 3 : n <= 70000 ? 2 : 1;
}

static size_t rounds_for(size_t n, const args *a)
{
    if (a->rounds)
        return a->rounds;
    if (a->quick)
        return 1;
    /* Small cases take milliseconds a round, and their ratios sit near 1 in
     * crowded workloads: more rounds keep the slow spells of a shared
     * machine (a whole replay process can run 1.35x slower) from deciding
     * their median. */
    return n <= 2000 ? 11 : n <= 20000 ? 3 : n <= 300000 ? 2 : 1;
}

typedef struct plan {
    case_plan cases[MAX_CASES];
    size_t count;
} plan;

/* The case of `workload` at n, batched if `flags` has CASE_BATCHED, made if it is new;
 * it takes on `flags`. NULL when there are too many cases. */
static case_plan *plan_case(plan *p, const char *workload, size_t n, unsigned flags, const args *a)
{
    case_plan *c = NULL;
    for (size_t i = 0; i < p->count && !c; i++)
        if (p->cases[i].n == n && strcmp(p->cases[i].workload, workload) == 0 &&
            (p->cases[i].flags & CASE_BATCHED) == (flags & CASE_BATCHED))
            c = &p->cases[i];
    if (c) {
        c->flags |= flags;
        return c;
    }
    if (p->count == MAX_CASES)
        return NULL;
    c = &p->cases[p->count++];
    memset(c, 0, sizeof *c);
    c->workload = workload;
    c->n = n;
    c->flags = flags;
    c->ticks = ticks_for(n, a->quick);
    c->rounds = rounds_for(n, a);
    c->warmup = !a->quick && n <= 20000;
    c->reference_full = a->quick ? 100000 : 2000;
    c->reference_limit = REFERENCE_LIMIT;
    /* Large worlds: the populating tick and part of one movement tick, unless --full.
     * Batched cases replay whole ticks: a batch stands for a tick's moves, and a part
     * of them, spread thinner over the world, would be less coherent in space. */
    c->move_limit_above = MOVE_LIMIT_ABOVE;
    c->move_limit =
        !a->full && n > c->move_limit_above && !(flags & CASE_BATCHED) ? DEFAULT_MOVE_LIMIT : 0;
    c->max_replay = a->max_replay >= 0 ? a->max_replay : a->full ? 600 : DEFAULT_MAX_REPLAY;
    c->params = &a->params;
    return c;
}

static int selected(const args *a, const char *workload)
{
    if (!a->workloads)
        return 1;
    size_t len = strlen(workload);
    for (const char *p = a->workloads; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, workload, len) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

static int check_workloads(const args *a)
{
    if (!a->workloads)
        return -1;
    char buf[512];
    if (strlen(a->workloads) >= sizeof buf)
        return cli_usage_error(PROGRAM, "%s", "--workloads: the list is too long");
    strcpy(buf, a->workloads);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (bench_workload_index(tok) != bench_workload_count) {
            if (listed_before(a->workloads, (size_t)(tok - buf), tok, strlen(tok)))
                return cli_usage_error(PROGRAM, "--workloads: '%s' is given twice", tok);
            continue;
        }
        char known[1024];
        size_t len = 0;
        for (size_t w = 0; w < bench_workload_count && len < sizeof known; w++) {
            int n = snprintf(known + len, sizeof known - len, "%s%s", w ? ", " : "",
                             bench_workloads[w].name);
            len += n > 0 ? (size_t)n : 0;
        }
        return cli_usage_error(PROGRAM, "--workloads: unknown workload '%s' (known: %s)", tok,
                               known);
    }
    return -1;
}

/* By workload, then N, then the single-call case before its batched twin: the twins
 * run one after the other, so that a slow spell of the machine hits both. */
static int compare_cases(const void *pa, const void *pb)
{
    const case_plan *a = pa, *b = pb;
    size_t ra = bench_workload_index(a->workload), rb = bench_workload_index(b->workload);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    unsigned ba = a->flags & CASE_BATCHED, bb = b->flags & CASE_BATCHED;
    return ba < bb ? -1 : ba > bb;
}

/* Whether case b is case a's batched twin: then they run together, round by round. */
static int is_twin(const case_plan *a, const case_plan *b)
{
    return a->n == b->n && strcmp(a->workload, b->workload) == 0 && !(a->flags & CASE_BATCHED) &&
           (b->flags & CASE_BATCHED);
}

/* Whether done case c is a smaller size of the next case's workload, run the same way. */
static int smaller_size_of(const case_result *c, const case_plan *next)
{
    return c->plan.n < next->n && strcmp(c->plan.workload, next->workload) == 0 &&
           (c->plan.flags & CASE_BATCHED) == (next->flags & CASE_BATCHED);
}

static int too_many_cases(void)
{
    return cli_usage_error(PROGRAM,
                           "more than %d cases: give fewer --workloads, --sizes or --sweep sizes, "
                           "or --batched off",
                           MAX_CASES);
}

static int make_plan(const args *a, plan *p)
{
    size_t sizes[MAX_SIZES], sweep[MAX_SIZES];
    int ns, nw;
    memset(p, 0, sizeof *p);
    const char *size_list = a->sizes   ? a->sizes
                            : a->quick ? "300"
                            : a->full  ? "1k,10k,100k"
                                       : "1k,10k";
    const char *sweep_list = a->sweep ? a->sweep : a->quick ? "300,1200" : "1k,4k,16k,64k,256k";
    if ((ns = parse_counts("--sizes", size_list, sizes)) < 0)
        return CLI_EXIT_USAGE;
    if (strcmp(sweep_list, "none") == 0)
        nw = 0;
    else if ((nw = parse_counts("--sweep", sweep_list, sweep)) < 0)
        return CLI_EXIT_USAGE;

    for (size_t w = 0; w < bench_workload_count; w++) {
        const char *name = bench_workloads[w].name;
        if (!selected(a, name))
            continue;
        /* The workloads of the move and teleport targets are also replayed in batches. */
        int twin =
            a->batched && (strcmp(name, "uniform_walk") == 0 || strcmp(name, "teleport") == 0);
        for (int i = 0; i < ns; i++)
            if (!plan_case(p, name, sizes[i], CASE_TABLE, a) ||
                (twin && !plan_case(p, name, sizes[i], CASE_TABLE | CASE_BATCHED, a)))
                return too_many_cases();
    }
    if (selected(a, "uniform_walk")) {
        for (int i = 0; i < nw; i++)
            if (!plan_case(p, "uniform_walk", sweep[i], CASE_SWEEP, a) ||
                (a->batched &&
                 !plan_case(p, "uniform_walk", sweep[i], CASE_SWEEP | CASE_BATCHED, a)))
                return too_many_cases();
        if (a->full) {
            case_plan *c = plan_case(p, "uniform_walk", 1000000, CASE_MEMORY, a);
            if (!c)
                return too_many_cases();
            c->ticks = 1;
            c->rounds = 1;
            c->warmup = 0;
        }
    }
    if (p->count == 0)
        return cli_usage_error(PROGRAM, "%s", "nothing to run");
    /* Each workload's sizes in ascending order: a backend too slow at one size is
     * skipped at the larger ones. */
    qsort(p->cases, p->count, sizeof p->cases[0], compare_cases);
    return -1;
}

/* The fewest entities of any case of the plan. */
static size_t smallest_case(const plan *p)
{
    size_t n = SIZE_MAX;
    for (size_t i = 0; i < p->count; i++)
        if (p->cases[i].n < n)
            n = p->cases[i].n;
    return n;
}

/* How much of the time budget a case deserves: its replayed operations, and four
 * times that for the cases the targets are measured on, so their medians have
 * rounds to stand on. */
static double case_weight(const case_plan *c)
{
    size_t moves = case_plan_moves(c, c->ticks * bench_workload_ops_per_tick(c->workload, c->n));
    double w = (double)c->n + (double)moves;
    if (c->n == 10000 &&
        (strcmp(c->workload, "uniform_walk") == 0 || strcmp(c->workload, "teleport") == 0))
        w *= 4;
    return w;
}

/* The share of what is left of the budget that case i may spend, cases [first, i)
 * having yet to run with it: cases that overran leave less to the later ones, cases
 * that finished early more. */
static double case_budget(const args *a, const plan *p, size_t first, size_t i, double elapsed)
{
    double budget = a->budget >= 0 ? a->budget : a->full || a->quick ? 0 : DEFAULT_BUDGET;
    double rest = 0;
    if (budget <= 0)
        return 0;
    for (size_t j = first; j < p->count; j++)
        rest += case_weight(&p->cases[j]);
    double left = budget - elapsed;
    /* An exhausted budget still lets every case run its one round. */
    return left > 0 ? left * case_weight(&p->cases[i]) / rest : 1e-9;
}

/* Whether backend b, judged by the same workload's two largest smaller sizes, would
 * run far over the replay time limit: then it is skipped rather than stopped. */
static const char *predicted_too_slow(const case_result *done, size_t count, const case_plan *next,
                                      size_t b, char *buf, size_t size)
{
    const case_result *p1 = NULL, *p2 = NULL;
    if (next->max_replay <= 0)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        const case_result *c = &done[i];
        if (!smaller_size_of(c, next) || b >= c->backend_count ||
            isnan(suite_replay_seconds(c, b)) || c->b[b].partial)
            continue;
        if (!p1 || c->plan.n > p1->plan.n) {
            p2 = p1;
            p1 = c;
        } else if (!p2 || c->plan.n > p2->plan.n) {
            p2 = c;
        }
    }
    if (!p1)
        return NULL;
    double per_op1 = suite_replay_seconds(p1, b) / (double)suite_replay_ops(p1, b);
    double growth = 1;
    if (p2) {
        double per_op2 = suite_replay_seconds(p2, b) / (double)suite_replay_ops(p2, b);
        double e = log(per_op1 / per_op2) / log((double)p1->plan.n / (double)p2->plan.n);
        if (e > 0)
            growth = pow((double)next->n / (double)p1->plan.n, e);
    }
    size_t moves =
        case_plan_moves(next, next->ticks * bench_workload_ops_per_tick(next->workload, next->n));
    double predicted = per_op1 * growth * ((double)next->n + (double)moves);
    if (predicted <= 1.5 * next->max_replay)
        return NULL;
    char about[32], limit[32];
    bench_fmt_seconds(about, sizeof about, predicted);
    bench_fmt_seconds(limit, sizeof limit, next->max_replay);
    snprintf(buf, size,
             "too slow: from its runs at N=%zu%s, a replay would take about %s (limit %s)",
             p1->plan.n, p2 ? " and smaller" : "", about, limit);
    return buf;
}

/* Whether backend b was too slow at a smaller size of the same workload: then it is
 * skipped, and *buf says why. */
static const char *too_slow_before(const case_result *done, size_t count, const case_plan *next,
                                   size_t b, char *buf, size_t size)
{
    for (size_t i = 0; i < count; i++) {
        const case_result *c = &done[i];
        if (smaller_size_of(c, next) && b < c->backend_count && c->b[b].too_slow) {
            char limit[32];
            bench_fmt_seconds(limit, sizeof limit, c->plan.max_replay);
            snprintf(buf, size, "too slow: a replay of N=%zu did not finish within %s", c->plan.n,
                     limit);
            return buf;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

/* The whole of a text file, or NULL with errno set. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    while (s) {
        size_t n = fread(s + len, 1, cap - len - 1, f);
        len += n;
        if (ferror(f)) { /* a directory opens, and fails here with EISDIR */
            int e = errno;
            free(s);
            s = NULL;
            errno = e;
            break;
        }
        if (len < cap - 1)
            break;
        char *t = realloc(s, cap * 2);
        if (!t) {
            free(s);
            s = NULL;
            break;
        }
        s = t;
        cap *= 2;
    }
    if (s)
        s[len] = '\0';
    int e = errno;
    fclose(f);
    errno = e;
    return s;
}

/* The directory part of a path: "." when it has none. */
static void dir_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, size, ".");
    else if (slash == path)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - path), path);
}

/* Appends c to the string out of `size` bytes, *len long, while it fits;
 * counts it in *len either way. */
static void put_char(char *out, size_t size, size_t *len, char c)
{
    if (*len + 1 < size) {
        out[*len] = c;
        out[*len + 1] = '\0';
    }
    (*len)++;
}

/* Appends `word` as a shell reads it back: as it is when it holds only
 * characters no shell treats specially, else in single quotes (a label
 * such as "commit 1a2b3c" is one argument). */
static void put_shell_word(char *out, size_t size, size_t *len, const char *word)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789,._+:@%/=-";
    int quote = !*word || strspn(word, plain) != strlen(word);
    if (quote)
        put_char(out, size, len, '\'');
    for (const char *c = word; *c; c++) {
        if (*c == '\'') {
            for (const char *q = "'\\''"; *q; q++)
                put_char(out, size, len, *q);
        } else {
            put_char(out, size, len, *c);
        }
    }
    if (quote)
        put_char(out, size, len, '\'');
}

/* The command line as the report shows it: options that name files are left out. */
static void describe_command(int argc, char **argv, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, PROGRAM);
    for (int i = 1; i < argc && len < size; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--out", 5) == 0 || strncmp(arg, "--svg-dir", 9) == 0 ||
            strncmp(arg, "--notes", 7) == 0) {
            if (!strchr(arg, '='))
                i++;
            continue;
        }
        put_char(out, size, &len, ' ');
        put_shell_word(out, size, &len, arg);
    }
}

/* Where the report and the charts go: settled, and checked, before anything runs. */
typedef struct outputs {
    const char *report; /* the report's file; NULL: standard output */
    int in_place;       /* not a regular file (/dev/stdout, a pipe): written in place */
    char svg_dir[PATH_MAX];
    int have_svg;
    char svg_link[PATH_MAX + 1]; /* what the report puts before a chart's file name */
} outputs;

static int output_error(const char *what, const char *path, const char *why)
{
    fprintf(stderr, PROGRAM ": cannot write %s to '%s': %s\n", what, path, why);
    return CLI_EXIT_USAGE;
}

static int output_error_read(const char *path)
{
    fprintf(stderr, PROGRAM ": cannot read the notes (--notes) '%s': %s\n", path, strerror(errno));
    return CLI_EXIT_USAGE;
}

/*
 * Checks that the report can be written where --out says: a regular file is
 * written beside it as FILE.tmp and renamed over it at the end, so that is
 * what is tried (a file made and removed); anything else must be writable
 * itself. Finding out after a run of minutes would waste the run.
 */
static int check_report(outputs *o)
{
    struct stat st;
    char tmp[PATH_MAX];
    if (stat(o->report, &st) == 0 && S_ISDIR(st.st_mode))
        return output_error("the report (--out)", o->report,
                            "it is a directory; give a file name, such as DIR/BENCHMARKS.md");
    if (stat(o->report, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->in_place = 1;
        return access(o->report, W_OK) == 0
                   ? -1
                   : output_error("the report (--out)", o->report, strerror(errno));
    }
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", o->report) >= sizeof tmp)
        return output_error("the report (--out)", o->report, strerror(ENAMETOOLONG));
    FILE *f = fopen(tmp, "w");
    if (!f)
        return output_error("the report (--out)", o->report, strerror(errno));
    fclose(f);
    remove(tmp);
    return -1;
}

/* Checks that a chart can be made in the chart directory: a file made and removed. */
static int check_svg_dir(const outputs *o, const char *origin)
{
    char probe[PATH_MAX], what[64];
    snprintf(what, sizeof what, "the charts (%s)", origin);
    if ((size_t)snprintf(probe, sizeof probe, "%s/.percept-bench-XXXXXX", o->svg_dir) >=
        sizeof probe)
        return output_error(what, o->svg_dir, strerror(ENAMETOOLONG));
    int fd = mkstemp(probe);
    if (fd < 0)
        return output_error(what, o->svg_dir, strerror(errno));
    close(fd);
    unlink(probe);
    return -1;
}

static int plan_outputs(const args *a, outputs *o)
{
    memset(o, 0, sizeof *o);
    o->report = a->out && strcmp(a->out, "-") != 0 ? a->out : NULL;
    int rc;
    if (o->report && (rc = check_report(o)) >= 0)
        return rc;
    if (a->trace) /* a trace's report has no charts */
        return -1;
    if (a->svg_dir) {
        snprintf(o->svg_dir, sizeof o->svg_dir, "%s", a->svg_dir);
        o->have_svg = 1;
        /* Charts beside the report are linked by name, others by the path given. */
        char out_dir[PATH_MAX];
        struct stat s1, s2;
        if (o->report)
            dir_of(o->report, out_dir, sizeof out_dir);
        else
            snprintf(out_dir, sizeof out_dir, ".");
        if (stat(out_dir, &s1) != 0 || stat(o->svg_dir, &s2) != 0 || s1.st_dev != s2.st_dev ||
            s1.st_ino != s2.st_ino)
            snprintf(o->svg_link, sizeof o->svg_link, "%s/", o->svg_dir);
        return check_svg_dir(o, "--svg-dir");
    }
    /* Beside a regular file only: a report sent to /dev/null or a pipe does
     * not ask for thirteen charts in /dev or in the pipe's directory. */
    if (o->report && !o->in_place) {
        dir_of(o->report, o->svg_dir, sizeof o->svg_dir);
        o->have_svg = 1;
        return check_svg_dir(o, "the directory of --out");
    }
    return -1;
}

/* Writes the report where plan_outputs() said. Returns 0, or -1 after saying why. */
static int write_report(const outputs *o, const bench_report *r)
{
    const char *path = o->report ? o->report : "standard output";
    char tmp[PATH_MAX];
    FILE *f = stdout;
    if (o->report) {
        snprintf(tmp, sizeof tmp, "%s.tmp", o->report);
        f = fopen(o->in_place ? o->report : tmp, "w");
        if (!f) {
            output_error("the report", path, strerror(errno));
            return -1;
        }
    }
    errno = 0;
    int bad = report_write_markdown(f, r) != 0;
    bad |= (f == stdout ? fflush(f) : fclose(f)) != 0;
    if (!bad && o->report && !o->in_place && rename(tmp, o->report) != 0)
        bad = 1;
    if (bad) {
        output_error("the report", path, errno ? strerror(errno) : "write error");
        if (o->report && !o->in_place)
            remove(tmp);
        return -1;
    }
    return 0;
}

/* Whether the reference (bruteforce) is among the backends. */
static int reference_listed(const name_list *backends)
{
    for (size_t b = 0; b < backends->count; b++)
        if (strcmp(backends->names[b], BENCH_REFERENCE) == 0)
            return 1;
    return 0;
}

/*
 * Checks that the reference can be found when it is not among the backends but some case
 * (the smallest holding `smallest` entities) is within its limit: it is then replayed as
 * the reference, and a run without it would check nothing. Returns -1, or exit status 2
 * after a message; `other` says how else the user may run.
 */
static int check_reference(const search_path *s, const name_list *backends, size_t smallest,
                           const char *other)
{
    char dirs[1024];
    if (reference_listed(backends) || smallest > REFERENCE_LIMIT || search_find(s, BENCH_REFERENCE))
        return -1;
    search_describe(s, dirs, sizeof dirs);
    fprintf(stderr,
            PROGRAM ": %s.so is in none of %s (PERCEPT_PLUGIN_PATH, then the install "
                    "directory): it is the reference that every backend's events are checked "
                    "against up to %d entities, replayed untimed when it is not in --backends; "
                    "%s, or %s\n",
            BENCH_REFERENCE, dirs, REFERENCE_LIMIT,
            s->env_ignored ? "install it (" SEARCH_ENV_IGNORED ")"
                           : "add its directory to PERCEPT_PLUGIN_PATH",
            other);
    return CLI_EXIT_USAGE;
}

/* The verdict on the events (see suite_check_summary()), with the run's time; `failed`
 * when something else went wrong (out of memory). A backend skipped for its time
 * (--max-replay) was not checked where it was skipped: then the verdict names the
 * backends it checked, and those it did not, rather than claim every backend. */
static void describe_check(const name_list *backends, const case_result *cases, size_t count,
                           const suite_check *s, int failed, double seconds, char *out, size_t size)
{
    char secs[32], checked[4096], skipped[4096], subject[4200];
    const char *every = "every backend's events";
    bench_fmt_seconds(secs, sizeof secs, seconds);
    if (s->skipped) {
        suite_describe_backends(cases, count, 0, "", checked, sizeof checked);
        snprintf(subject, sizeof subject, "the events of %s", checked);
        every = subject;
    }
    const char *hidden =
        s->hidden ? " (bruteforce, replayed untimed: it was not in --backends)" : "";
    if (failed || s->failed || s->reference_failed)
        snprintf(out, size, "FAILED: a replay failed or events differ in %s", secs);
    else if (s->disagree)
        snprintf(out, size,
                 "FAILED: backends disagree in %zu case%s (see above): no hash has a strict "
                 "majority, so none is blamed and none is the fastest; in %s",
                 s->disagree, s->disagree == 1 ? "" : "s", secs);
    else if (s->usable == 0)
        snprintf(out, size,
                 "FAILED: no backend completed a replay in %s (see above): no events were "
                 "compared",
                 secs);
    else if (s->unchecked)
        snprintf(out, size,
                 "FAILED: events compared with no other replay's (UNCHECKED above: %zu "
                 "backend%s in %zu case%s), so nothing says they are right; in %s",
                 s->unchecked, s->unchecked == 1 ? "" : "s", s->unchecked_cases,
                 s->unchecked_cases == 1 ? "" : "s", secs);
    else if (reference_listed(backends) && backends->count == 1)
        snprintf(out, size,
                 "%s ran alone in %s: it is the reference, so its events were not compared "
                 "with another backend's",
                 BENCH_REFERENCE, secs);
    else if (s->checked == 0) /* the others skipped: the reference alone completed a replay */
        snprintf(out, size,
                 "%s alone completed a replay in %s: it is the reference, so no backend's events "
                 "were compared with it",
                 BENCH_REFERENCE, secs);
    else if (s->by_reference == 0)
        snprintf(out, size, "%s agree with the other backends' (%s did not run) in %s", every,
                 BENCH_REFERENCE, secs);
    else if (s->by_reference == count && s->reference_whole == count && !s->by_majority)
        snprintf(out, size, "%s match the reference%s in %s", every, hidden, secs);
    else
        snprintf(out, size,
                 "%s match the reference%s where it ran, and the other backends' elsewhere, in %s",
                 every, hidden, secs);
    size_t len = strlen(out);
    if (s->skipped && len + 1 < size) {
        suite_describe_backends(cases, count, 1, "", skipped, sizeof skipped);
        snprintf(out + len, size - len, "; NOT checked (see above): %s", skipped);
    }
}

/* The report's date, "YYYY-MM-DD HH:MM UTC". */
static void describe_date(char *out, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, size, "%Y-%m-%d %H:%M UTC", &tm);
}

/* What the header of either report (the named workloads' or a trace's) says
 * about the run: the machine, probed before the first replay and its load
 * read again after the last, the command line, the date and the time taken. */
typedef struct run_header {
    bench_machine machine;
    double start;
    char command[1024], date[64];
} run_header;

static void header_start(run_header *h)
{
    /* The report says so too; said first here, as it changes what the run measures. */
    if (!replay_forks())
        fprintf(stderr, PROGRAM ": PERCEPT_BENCH_NO_FORK is set: every replay runs in this "
                                "process, one after another; no memory is measured, and "
                                "--max-replay stops no replay\n");
    bench_machine_probe(&h->machine);
    h->start = cli_now_seconds();
}

/* Stops the run's clock and fills in what every report has: the header and
 * the cases run, with the backends' names. The caller adds its kind's fields. */
static bench_report header_finish(run_header *h, int argc, char **argv, const case_result *cases,
                                  size_t done, const name_list *backends, const char *notes)
{
    double seconds = cli_now_seconds() - h->start;
    bench_machine_load(h->machine.load_end);
    describe_command(argc, argv, h->command, sizeof h->command);
    describe_date(h->date, sizeof h->date);
    return (bench_report){
        .machine = &h->machine,
        .cases = cases,
        .case_count = done,
        .backends = (const char *const *)backends->names,
        .backend_count = backends->count,
        .command = h->command,
        .date = h->date,
        .seconds = seconds,
        .notes = notes,
        .in_process = !replay_forks(),
    };
}

/*
 * Prints the verdict on the events, then where the report went, leaving the
 * line open for what the caller says of charts: a write failure is not a
 * mismatch, and a report is only said to be somewhere once it is. Returns
 * `failed`, or 1 when the check found no match to claim.
 */
static int print_verdict(const bench_report *r, const name_list *backends, int failed,
                         int report_error, const outputs *out)
{
    char verdict[10000];
    suite_check check;
    suite_check_summary(r->cases, r->case_count, &check);
    describe_check(backends, r->cases, r->case_count, &check, failed, r->seconds, verdict,
                   sizeof verdict);
    fprintf(stderr, PROGRAM ": %s", verdict);
    if (report_error)
        fprintf(stderr, "; the report was NOT written (see above)");
    else if (out->report)
        fprintf(stderr, ", report in %s", out->report);
    return failed | suite_check_failed(&check);
}

/*
 * --trace: loads the trace (exit 2 at its first fault, before any replay),
 * runs it as one case against every backend and writes its report. Returns
 * the exit status.
 */
static int run_trace(const args *a, int argc, char **argv, const search_path *search,
                     const name_list *backends, const char *notes, const outputs *out)
{
    bench_trace t;
    char err[1024];
    int st = bench_trace_load(&t, a->trace, stderr, err, sizeof err);
    if (st == -2) {
        fprintf(stderr, PROGRAM ": out of memory loading the trace '%s'\n", a->trace);
        return EXIT_MISMATCH;
    }
    if (st != 0) {
        fprintf(stderr, PROGRAM ": %s\n", err);
        return CLI_EXIT_USAGE;
    }
    size_t n = t.wl.n;
    if ((st = check_reference(search, backends, n,
                              "benchmark a trace of more than 10000 "
                              "entities")) >= 0) {
        bench_trace_free(&t);
        return st;
    }
    /* bruteforce is the one backend a trace's run skips, above TRACE_REFERENCE_LIMIT
     * entities: a run of it alone there would replay nothing, and say so only at the end. */
    size_t skipped = 0;
    for (size_t b = 0; b < backends->count; b++)
        skipped += strcmp(backends->names[b], BENCH_REFERENCE) == 0 && n > TRACE_REFERENCE_LIMIT;
    if (skipped == backends->count) {
        bench_trace_free(&t);
        return cli_usage_error(PROGRAM,
                               "the trace holds up to %zu entities at once, and %s (O(N) per "
                               "query) is not run above %d: no backend would run; list another "
                               "in --backends",
                               n, BENCH_REFERENCE, TRACE_REFERENCE_LIMIT);
    }
    case_plan cp = {
        .workload = t.name,
        .n = n,
        .ticks = t.wl.tick_count - 1,
        .rounds = rounds_for(n, a),
        .max_replay = a->max_replay >= 0 ? a->max_replay : DEFAULT_MAX_REPLAY,
        .warmup = n <= 20000,
        .reference_full = TRACE_REFERENCE_LIMIT,
        .reference_limit = TRACE_REFERENCE_LIMIT,
        .budget = a->budget >= 0 ? a->budget : DEFAULT_BUDGET,
        .flags = CASE_TRACE,
        .params = &a->params,
    };

    run_header header;
    header_start(&header);
    char found[2048];
    list_describe(search, backends, found, sizeof found);
    fprintf(stderr,
            PROGRAM ": trace %s: %lu lines, %zu operations, at most %zu entities; "
                    "backends: %s\n",
            t.name, t.lines, t.wl.op_count, n, found);
    case_result *result = calloc(1, sizeof *result);
    int failed = !result;
    size_t done = 0;
    if (result && suite_run_workload(result, &cp, &t.wl, (const char *const *)backends->names,
                                     backends->count, stderr) == 0)
        done = 1;
    else
        failed = 1;
    for (size_t b = 0; done && b < result->backend_count; b++)
        failed |= result->b[b].failed;
    if (!done)
        fprintf(stderr, PROGRAM ": cannot replay the trace: out of memory\n");
    bench_report report = header_finish(&header, argc, argv, result, done, backends, notes);
    report.label = a->label;
    report.params = &a->params;
    report.trace = &t;
    int report_error = write_report(out, &report) != 0;
    failed = print_verdict(&report, backends, failed, report_error, out);
    fprintf(stderr, "; no charts (a trace's report has none)\n");
    free(result);
    bench_trace_free(&t);
    return failed || report_error ? EXIT_MISMATCH : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    args a;
    search_path search;
    name_list backends;
    outputs out;
    plan p;
    int rc;

    if ((rc = parse_args(argc, argv, &a)) >= 0 || (rc = check_workloads(&a)) >= 0 ||
        (rc = check_outputs_distinct(&a)) >= 0)
        return rc;
    if (search_init(&search)) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        return EXIT_MISMATCH;
    }
    /* Every check of the command line and of the outputs comes before any replay. */
    if ((rc = find_backends(&a, &search, &backends)) >= 0) {
        free(search.env_copy);
        return rc;
    }
    char *notes = NULL;
    rc = check_param_backends(&a, &backends);
    if (rc < 0 && (rc = a.trace ? -1 : make_plan(&a, &p)) < 0 && !a.trace)
        rc = check_reference(&search, &backends, smallest_case(&p), "run only sizes above 10000");
    if (rc < 0 && a.notes && !(notes = read_text(a.notes)))
        rc = output_error_read(a.notes);
    if (rc < 0)
        rc = plan_outputs(&a, &out);
    /* Last, as it loads the plugins: a world of each backend given --param settings. */
    if (rc < 0)
        rc = check_params_accepted(&a, &backends);
    if (rc >= 0) {
        free(notes);
        list_free(&backends);
        free(search.env_copy);
        return rc;
    }
    if (a.trace) {
        rc = run_trace(&a, argc, argv, &search, &backends, notes, &out);
        free(notes);
        list_free(&backends);
        free(search.env_copy);
        return rc;
    }

    run_header header;
    header_start(&header);
    char found[2048];
    list_describe(&search, &backends, found, sizeof found);
    fprintf(stderr, PROGRAM ": %zu cases, backends: %s\n", p.count, found);

    case_result *results = calloc(p.count, sizeof *results);
    if (!results) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        free(notes);
        list_free(&backends);
        free(search.env_copy);
        return EXIT_MISMATCH;
    }
    size_t done = 0;
    int failed = 0;
    for (size_t i = 0, twins; i < p.count; i += twins) {
        twins = i + 1 < p.count && is_twin(&p.cases[i], &p.cases[i + 1]) ? 2 : 1;
        double elapsed = cli_now_seconds() - header.start;
        fprintf(stderr, "[%4.0fs]", elapsed);
        char notes_buf[SUITE_MAX_TWINS][BENCH_MAX_BACKENDS][256];
        const char *skip[SUITE_MAX_TWINS][BENCH_MAX_BACKENDS];
        for (size_t k = 0; k < twins; k++) {
            case_plan *c = &p.cases[i + k];
            c->budget = case_budget(&a, &p, i, i + k, elapsed);
            for (size_t b = 0; b < backends.count; b++) {
                char *why = notes_buf[k][b];
                /* The batched twin replays the same populating tick and at least as many
                 * moves: too slow with one call per move, it is too slow in batches. */
                if (k > 0 && skip[0][b]) {
                    skip[k][b] = skip[0][b];
                    continue;
                }
                skip[k][b] = too_slow_before(results, done, c, b, why, sizeof notes_buf[k][b]);
                if (!skip[k][b])
                    skip[k][b] =
                        predicted_too_slow(results, done, c, b, why, sizeof notes_buf[k][b]);
            }
        }
        if (suite_run_cases(&results[done], &p.cases[i], twins, (const char *const *)backends.names,
                            backends.count, skip, a.seed, stderr) != 0) {
            fprintf(stderr, PROGRAM ": cannot generate %s with %zu entities: out of memory\n",
                    p.cases[i].workload, p.cases[i].n);
            failed = 1;
            continue;
        }
        for (size_t k = 0; k < twins; k++, done++)
            for (size_t b = 0; b < results[done].backend_count; b++)
                failed |= results[done].b[b].failed;
    }
    bench_report report = header_finish(&header, argc, argv, results, done, &backends, notes);
    report.label = a.label;
    report.params = &a.params;
    report.seed = a.seed;
    report.svg_dir = out.have_svg ? out.svg_dir : NULL;
    report.svg_link = out.svg_link;
    report.quick = a.quick;
    int chart_errors = out.have_svg ? report_write_charts(&report, stderr) : 0;
    int report_error = write_report(&out, &report) != 0;

    target_result t[TARGET_COUNT];
    targets_evaluate(results, done, t);
    fprintf(stderr, "\nTargets%s:\n", a.quick ? " (not judged: --quick sizes are too small)" : "");
    for (int i = 0; i < TARGET_COUNT; i++)
        fprintf(stderr, "  %-*s %s: %s\n", a.quick ? 20 : 12, target_status_label(&t[i], a.quick),
                t[i].name, t[i].measured);

    failed = print_verdict(&report, &backends, failed, report_error, &out);
    if (!out.have_svg)
        fprintf(stderr, "; no charts (they are written with --out FILE or --svg-dir DIR)");
    else if (chart_errors)
        fprintf(stderr, "; %d chart%s NOT written to %s (see above)", chart_errors,
                chart_errors == 1 ? " was" : "s were", out.svg_dir);
    else
        fprintf(stderr, ", charts in %s", out.svg_dir);
    fprintf(stderr, "\n");

    free(results);
    free(notes);
    list_free(&backends);
    free(search.env_copy);
    return failed || report_error || chart_errors ? EXIT_MISMATCH : EXIT_SUCCESS;
}
