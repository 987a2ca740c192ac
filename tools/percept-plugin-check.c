/*
 * percept-plugin-check - runs the conformance checks every shipped backend
 * passes (tools/plugin_check.c) on plugin files, with no percept build tree.
 * Each check runs in a child process that loads the plugin itself, so that
 * a plugin that crashes or hangs, even while it is loaded, fails that check
 * and the others still run.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "plugin_check.h"

#define PROGRAM "percept-plugin-check"
#define MAX_TIMEOUT 86400

static unsigned timeout_seconds = 300;

static void usage(void)
{
    fputs("Usage: " PROGRAM " [--memory-required] [--timeout SECONDS] PLUGIN.so...\n"
          "       " PROGRAM " --help | --version\n"
          "\n"
          "Run the conformance checks of percept's backends on each PLUGIN.so: the ops\n"
          "table, then its operations against a model of the index. Each check runs in\n"
          "a process of its own: a crash or a hang fails that check. Prints PASS or FAIL\n"
          "per check on standard output, and why a check failed on standard error.\n"
          "\n"
          "Options:\n"
          "  --memory-required  fail 'table' for a plugin without memory_usage()\n"
          "  --timeout SECONDS  fail a check that runs longer, and skip the plugin's\n"
          "                     other checks (default 300; 0: no limit)\n"
          "  --help             print this help and exit\n"
          "  --version          print the version of the percept library and exit\n"
          "\n"
          "Exit status: 0 when every check passed, 1 when one failed, 2 for bad usage.\n",
          stdout);
}

/* Runs check c on the plugin file p in a child; 0 when it passed, -2 when
 * it ran out of time, -1 when it failed otherwise. The limit is kept here,
 * not by an alarm in the child, which a plugin could block. */
static int run_in_child(const pc_plugin *p, const pc_check *c)
{
    int fds[2];
    pid_t pid = -1;
    fflush(stdout);
    if (pipe(fds) != 0 || (pid = fork()) < 0) {
        fprintf(stderr, PROGRAM ": cannot start a check: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* The verdict goes through the pipe once the check has returned, so
         * that a plugin that ends the process cannot pass. */
        pc_plugin loaded;
        pc_plugin_load(&loaded, p->path); /* a failure is the table check's to report */
        loaded.memory_required = p->memory_required;
        pc_current = &loaded;
        pc_current_check = c->name;
        char verdict = c->run(&loaded) == 0 ? 'P' : 'F';
        fflush(stderr);
        _exit(write(fds[1], &verdict, 1) == 1 ? 0 : 1);
    }
    close(fds[1]);
    double deadline = cli_now_seconds() + timeout_seconds;
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    char said = 0;
    int ready = 0, timed_out = 0;
    while (ready == 0 || (ready < 0 && errno == EINTR)) {
        double left = deadline - cli_now_seconds();
        if ((timed_out = timeout_seconds > 0 && left <= 0) != 0)
            break;
        ready = poll(&pfd, 1, timeout_seconds > 0 ? (int)(left * 1000) + 1 : -1);
    }
    if (ready > 0 && read(fds[0], &said, 1) != 1)
        said = 0;
    if (timed_out)
        kill(pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        continue;
    if (timed_out)
        fprintf(stderr, "backend '%s' fails %s: still running after %u s (--timeout)\n", p->name,
                c->name, timeout_seconds);
    else if (WIFSIGNALED(status))
        fprintf(stderr, "backend '%s' fails %s: stopped by signal %d (%s)\n", p->name, c->name,
                WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (said == 0)
        fprintf(stderr, "backend '%s' fails %s: the process ended inside the check\n", p->name,
                c->name);
    return said == 'P' ? 0 : timed_out ? -2 : -1;
}

/* Runs the checks on p, "table" first; 0 when all pass. */
static int check_plugin(const pc_plugin *p)
{
    int run = 0, failed = 0;
    for (size_t i = 0; i < pc_check_count; i++) {
        int rc = run_in_child(p, &pc_checks[i]), ok = rc == 0;
        printf("%s: %s %s\n", ok ? "PASS" : "FAIL", p->name, pc_checks[i].name);
        run++;
        failed += !ok;
        /* The other checks drive the table; and a plugin that hung in one
         * check would most likely hang in each of them, --timeout each. */
        if ((!ok && i == 0) || rc == -2)
            break;
    }
    printf("%s: %d of %d checks %s\n", p->path, failed ? failed : run, run,
           failed ? "failed" : "passed");
    return failed > 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    int memory_required = 0, count = 0;
    char **paths = argv; /* the operands, gathered at the front of argv */

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        if (strcmp(arg, "--help") == 0) {
            usage();
            return 0;
        } else if (cli_version(PROGRAM, arg)) {
            return 0;
        } else if (strcmp(arg, "--memory-required") == 0) {
            memory_required = 1;
        } else if (cli_option_value(argc, argv, &i, "--timeout", &v) != 0) {
            char *end = NULL;
            unsigned long t = v != NULL && v[0] >= '0' && v[0] <= '9' ? strtoul(v, &end, 10) : 0;
            if (end == NULL || *end != '\0' || t > MAX_TIMEOUT)
                return cli_usage_error(PROGRAM, "--timeout needs whole seconds from 0 to %d",
                                       MAX_TIMEOUT);
            timeout_seconds = (unsigned)t;
        } else if (arg[0] == '-') {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        } else {
            paths[count++] = argv[i];
        }
    }
    if (count == 0)
        return cli_usage_error(PROGRAM, "no PLUGIN.so given");

    pc_plugin p;
    for (int k = 0; k < count; k++) {
        struct stat st;
        if (stat(paths[k], &st) != 0 || !S_ISREG(st.st_mode) || pc_plugin_name(&p, paths[k]) != 0)
            return cli_usage_error(PROGRAM, "'%s' is not a plugin file (NAME.so)", paths[k]);
    }
    int failed = 0;
    for (int k = 0; k < count; k++) {
        pc_plugin_name(&p, paths[k]); /* only the children load it */
        p.memory_required = memory_required;
        failed += check_plugin(&p) != 0;
    }
    return failed > 0 ? 1 : 0;
}
