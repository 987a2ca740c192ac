/*
 * percept-plugin-check - runs the conformance checks every shipped backend
 * passes (tools/plugin_check.c) on plugin files, with no percept build tree:
 * the ops table, parameters, the query contract, reserve() under a failing
 * allocator, memory_usage(), leaks. Each check runs in a process of its own,
 * so that a plugin that crashes fails that check, named, and the others
 * still run.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "plugin_check.h"

#define PROGRAM "percept-plugin-check"
#define EXIT_FAILED 1
/* Seconds a check may run: the shipped backends take under one each. */
#define DEFAULT_TIMEOUT 300
#define MAX_TIMEOUT 86400

static unsigned check_timeout = DEFAULT_TIMEOUT;

static void usage(FILE *out)
{
    fputs("Usage: " PROGRAM " [--check NAME]... [--memory-required]\n"
          "                            [--timeout SECONDS] PLUGIN.so...\n"
          "       " PROGRAM " --list | --help | --version\n"
          "\n"
          "Run the conformance checks that every backend shipped with percept passes on\n"
          "each PLUGIN.so (a path, as your build leaves it: ./.libs/mine.so, say): the\n"
          "ops table, parameters, queries against a model of the index (never missing an\n"
          "entity, never naming one removed, never allocating), reserve() with each\n"
          "allocation failing in turn, memory_usage() against the bytes held, leaks.\n"
          "Each check runs in a process of its own: a crash fails that check, by name,\n"
          "and the others still run. docs/plugins.md says what each contract means.\n"
          "\n"
          "Options:\n"
          "  --check NAME       run only this check (repeatable; --list names them)\n"
          "  --memory-required  fail 'table' for a plugin without memory_usage() (by\n"
          "                     default it is optional, as backend.h says, and checked\n"
          "                     when present)\n"
          "  --timeout SECONDS  fail a check that runs longer, 0 to 86400 (default 300;\n"
          "                     0: no limit): a plugin that loops fails instead of hanging\n"
          "  --list             print the checks' names, in the order they run, and exit\n"
          "  --help             print this help and exit\n"
          "  --version          print the version of the percept library and exit\n"
          "\n"
          "Prints PASS or FAIL per check and plugin on standard output, and why a check\n"
          "failed on standard error; N/A for a check with nothing to test in the plugin\n"
          "(size_limits knows the size parameters of the shipped backends only). Exit\n"
          "status: 0 when every check passed or was N/A, 1 when one failed (a plugin\n"
          "that cannot be loaded fails 'table'), 2 for bad usage.\n",
          out);
}

static void print_line(const char *line)
{
    fputs(line, stderr);
}

/* In a child, whose standard output and error go to a file (see
 * run_in_child()): the reports go to the real standard error. */
static int report_fd = -1;

static void report_to_fd(const char *line)
{
    (void)cli_write_all(report_fd, line, strlen(line)); /* nowhere else to say it failed */
}

/*
 * After a check: what the plugin printed (the child's standard output and
 * error went to `captured`). A plugin must not print: the host's program
 * owns those streams. Says so with the first line and returns -1; 0 when
 * nothing was printed. After a check that failed otherwise, shows up to 40
 * lines, which may explain it (a sanitizer's report, glibc's on a bad
 * free()).
 */
static int check_printed(const pc_plugin *p, const pc_check *c, FILE *captured, int failed)
{
    struct stat st;
    if (fstat(fileno(captured), &st) != 0 || st.st_size == 0)
        return 0;
    rewind(captured);
    char line[160];
    if (fgets(line, sizeof line, captured) == NULL)
        line[0] = '\0';
    line[strcspn(line, "\n")] = '\0';
    fprintf(stderr,
            "backend '%s' fails %s: printed %jd bytes to standard output or error, starting "
            "'%s': a plugin must not print (the program that loads it owns those streams)\n",
            p->name, c->name, (intmax_t)st.st_size, line);
    rewind(captured);
    int lines = 0, ch;
    while (failed && lines < 40 && (ch = getc(captured)) != EOF) {
        if (ch == '\n')
            lines++;
        putc(ch, stderr);
    }
    return -1;
}

/* What a child says through its pipe: that the plugin is loaded, then the
 * check's verdict. */
#define SAID_LOADED 'L'

/* The reason a signal gives, for the message naming it. */
static const char *signal_hint(int sig, int loaded)
{
    if (!loaded)
        return sig == SIGBUS ? ": a file shorter than its headers say (truncated, or rewritten "
                               "while it was loaded?)"
                             : "";
    if (sig == SIGABRT)
        return ": abort(), called by the plugin, or by the C library for a block freed or "
               "resized around host->alloc or a corrupted heap";
    return "";
}

/*
 * Reads what the child says (see SAID_LOADED) into said[0..1] until it has
 * said both or closed the pipe, or --timeout has passed (*timed_out set);
 * returns how many bytes came. The limit is kept here, not by an alarm in
 * the child, which a plugin could block.
 */
static int read_said(int fd, char said[2], int *timed_out)
{
    *timed_out = 0;
    double deadline = cli_now_seconds() + check_timeout;
    int got = 0;
    while (got < 2) {
        int wait = -1;
        if (check_timeout > 0) {
            double left = deadline - cli_now_seconds();
            if (left <= 0) {
                *timed_out = 1;
                break;
            }
            wait = left * 1000 + 1 > INT_MAX ? INT_MAX : (int)(left * 1000) + 1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, wait);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            break;
        if (ready == 0)
            continue; /* the deadline is tested above */
        ssize_t n = read(fd, said + got, (size_t)(2 - got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (int)n;
    }
    return got;
}

/* The check's outcome from how the child ended and what it said; says why
 * it failed on standard error. */
static int verdict(const pc_plugin *p, const pc_check *c, int status, int timed_out, int got,
                   const char said[2])
{
    int loaded = got >= 1 && said[0] == SAID_LOADED;
    /* What ran before the check: the words of every message about it. */
    const char *loading = "loading it (dlopen, its constructors, its entry function)";
    if (timed_out) {
        fprintf(stderr, "backend '%s' fails %s: %s\n", p->name, c->name,
                loaded ? "it ran longer than --timeout (a loop that never ends?)"
                       : "loading it took longer than --timeout (a loop in its entry function "
                         "or a constructor?)");
        return -1;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fprintf(stderr, "backend '%s' fails %s: %s%sstopped by signal %d (%s)%s\n", p->name,
                c->name, loaded ? "" : loading, loaded ? "" : " was ", sig, strsignal(sig),
                signal_hint(sig, loaded));
        return -1;
    }
    if (got != 2) {
        fprintf(stderr,
                "backend '%s' fails %s: the process ended %s%s (exit status %d): a plugin must not "
                "end the process\n",
                p->name, c->name, loaded ? "inside the check" : "while ", loaded ? "" : loading,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return said[1] == 'P' ? 0 : said[1] == 'N' ? PC_NOT_APPLICABLE : -1;
}

/*
 * Runs check c on the plugin file p in a child process, which loads the
 * plugin itself: a file that crashes or hangs dlopen(), its constructors or
 * its entry function fails the check, named, and never reaches this
 * process. Returns 0 when it passed, PC_NOT_APPLICABLE when it had nothing
 * to test, else -1. The child reports its verdict through a pipe once the
 * check has returned, so a plugin that ends the process itself (exit(0) in
 * a query, say) cannot pass for a check that passed.
 */
static int run_in_child(const pc_plugin *p, const pc_check *c)
{
    int fds[2];
    FILE *captured = tmpfile();
    if (captured == NULL) {
        fprintf(stderr, PROGRAM ": cannot make a temporary file: %s\n", strerror(errno));
        return -1;
    }
    if (pipe(fds) != 0) {
        fprintf(stderr, PROGRAM ": pipe: %s\n", strerror(errno));
        fclose(captured);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, PROGRAM ": fork: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        fclose(captured);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        /* What the plugin prints goes to `captured`, the reports to the
         * real standard error. */
        report_fd = dup(STDERR_FILENO);
        if (report_fd >= 0 && dup2(fileno(captured), STDOUT_FILENO) >= 0 &&
            dup2(fileno(captured), STDERR_FILENO) >= 0)
            pc_set_reporter(report_to_fd);
        pc_plugin loaded;
        pc_plugin_load(&loaded, p->path); /* a failure is the table check's to report */
        loaded.memory_required = p->memory_required;
        char said = SAID_LOADED;
        ssize_t unused = write(fds[1], &said, 1);
        pc_current = &loaded;
        pc_current_check = c->name;
        int rc = c->run(&loaded);
        said = rc == 0 ? 'P' : rc == PC_NOT_APPLICABLE ? 'N' : 'F';
        fflush(stdout);
        fflush(stderr);
        unused = write(fds[1], &said, 1);
        (void)unused;
        _exit(0);
    }
    close(fds[1]);
    char said[2] = {0, 0};
    int timed_out;
    int got = read_said(fds[0], said, &timed_out);
    if (timed_out)
        kill(pid, SIGKILL);
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, PROGRAM ": waitpid: %s\n", strerror(errno));
            fclose(captured);
            return -1;
        }
    }
    int rc = verdict(p, c, status, timed_out, got, said);
    if (check_printed(p, c, captured, rc < 0) != 0)
        rc = -1;
    fclose(captured);
    return rc;
}

static const pc_check *find_check(const char *name)
{
    for (size_t i = 0; i < pc_check_count; i++)
        if (strcmp(pc_checks[i].name, name) == 0)
            return &pc_checks[i];
    return NULL;
}

/* Runs the chosen checks (all when none is chosen) on one plugin; returns its failures. */
static int check_plugin(pc_plugin *p, const unsigned char *chosen, int any_chosen)
{
    int failures = 0, run = 0;
    char failed_names[1024] = "", not_applicable[1024] = "";
    for (size_t i = 0; i < pc_check_count; i++) {
        const pc_check *c = &pc_checks[i];
        /* Every other check drives the ops table: the table's check runs
         * first, chosen or not, since without a sound table they would only
         * crash. */
        int is_table = i == 0;
        if (!is_table && any_chosen && !chosen[i])
            continue;
        int rc = run_in_child(p, c);
        const char *name = p->name[0] ? p->name : p->path;
        if (rc == PC_NOT_APPLICABLE) {
            printf("N/A: %s %s\n", name, c->name);
            strncat(not_applicable, " ", sizeof not_applicable - strlen(not_applicable) - 1);
            strncat(not_applicable, c->name, sizeof not_applicable - strlen(not_applicable) - 1);
            continue;
        }
        run++;
        int ok = rc == 0;
        printf("%s: %s %s\n", ok ? "PASS" : "FAIL", name, c->name);
        if (!ok) {
            failures++;
            strncat(failed_names, " ", sizeof failed_names - strlen(failed_names) - 1);
            strncat(failed_names, c->name, sizeof failed_names - strlen(failed_names) - 1);
            if (is_table) {
                printf("%s: the other checks need a sound ops table: not run\n", p->path);
                break;
            }
        }
    }
    if (failures == 0)
        printf("%s: %d of %d checks passed", p->path, run, run);
    else
        printf("%s: %d of %d checks failed:%s", p->path, failures, run, failed_names);
    if (not_applicable[0] != '\0')
        printf("; not applicable:%s", not_applicable);
    putchar('\n');
    return failures;
}

int main(int argc, char **argv)
{
    unsigned char chosen[64] = {0};
    int any_chosen = 0, memory_required = 0, only_operands = 0;
    unsigned seen = 0; /* options that take one value: given twice is a mistake */
    /* The operands, gathered at the front of argv as the options are read. */
    char **paths = argv;
    int path_count = 0;

    if (pc_check_count > sizeof chosen) {
        fprintf(stderr, PROGRAM ": more checks than room to choose them\n");
        return CLI_EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        int r;
        if (only_operands || arg[0] != '-' || arg[1] == '\0') {
            paths[path_count++] = argv[i];
        } else if (strcmp(arg, "--") == 0) {
            only_operands = 1;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (cli_version(PROGRAM, arg)) {
            return 0;
        } else if (strcmp(arg, "--list") == 0) {
            for (size_t k = 0; k < pc_check_count; k++)
                puts(pc_checks[k].name);
            return 0;
        } else if (strcmp(arg, "--memory-required") == 0) {
            memory_required = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--timeout", &value)) != 0) {
            int twice = cli_once(PROGRAM, &seen, 0, "--timeout");
            if (twice >= 0)
                return twice;
            unsigned long t = 0;
            char *end = NULL;
            if (r > 0 && value[0] >= '0' && value[0] <= '9') {
                errno = 0;
                t = strtoul(value, &end, 10);
            }
            if (end == NULL || *end != '\0' || errno != 0 || t > MAX_TIMEOUT)
                return cli_usage_error(PROGRAM,
                                       "--timeout%s%s: expected whole seconds from 0 to %d",
                                       r > 0 ? " " : "", r > 0 ? value : "", MAX_TIMEOUT);
            check_timeout = (unsigned)t;
        } else if ((r = cli_option_value(argc, argv, &i, "--check", &value)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "--check: expected the name of a check");
            const pc_check *c = find_check(value);
            if (c == NULL)
                return cli_usage_error(PROGRAM, "--check %s: no such check (--list names them)",
                                       value);
            chosen[c - pc_checks] = 1;
            any_chosen = 1;
        } else {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        }
    }
    if (path_count == 0)
        return cli_usage_error(PROGRAM, "no plugin given: name one or more PLUGIN.so files");
    /* A path that is no file is a mistake on the command line, not a plugin
     * that fails: say so before running anything. */
    for (int k = 0; k < path_count; k++) {
        struct stat st;
        size_t n = strlen(paths[k]);
        if (stat(paths[k], &st) != 0)
            return cli_usage_error(PROGRAM, "cannot open '%s': %s", paths[k], strerror(errno));
        if (!S_ISREG(st.st_mode))
            return cli_usage_error(PROGRAM, "'%s' is not a regular file", paths[k]);
        if (n < 4 || strcmp(paths[k] + n - 3, ".so") != 0)
            return cli_usage_error(PROGRAM, "'%s' is not a plugin file: expected NAME.so",
                                   paths[k]);
    }

    pc_set_reporter(print_line);
    int failed_plugins = 0;
    for (int k = 0; k < path_count; k++) {
        /* Only the children load it (see run_in_child()). The operands'
         * names were checked above. */
        pc_plugin p;
        pc_plugin_locate(&p, paths[k]);
        p.memory_required = memory_required;
        failed_plugins += check_plugin(&p, chosen, any_chosen) > 0;
    }
    return failed_plugins > 0 ? EXIT_FAILED : 0;
}
