/*
 * fuzz_trace.c - libFuzzer target for percept-replay's trace parser and
 * replay loop: each input is written to a temporary file and replayed by
 * percept-replay's own main(), compiled from tools/percept-replay.c with
 * -Dmain=replay_main (see Makefile.am), with --backend bruteforce.
 *
 * Why this way: the tool stays exactly as shipped, with no library-like
 * split to maintain for the fuzzer's sake. Its main() ends with return, never
 * exit(), and frees everything, so it can be called once per input in the
 * same process (no fork needed). Its output goes to /dev/null; its error
 * messages go to stderr (make fuzz passes -close_fd_mask=2 to silence them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"

int replay_main(int argc, char **argv);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char trace_path[64];
static char tmp_path[4096];
static int trace_fd = -1;

static void remove_tmp(void)
{
    if (tmp_path[0] != '\0')
        unlink(tmp_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("TMPDIR");

    (void)argc;
    (void)argv;
    fuzz_load_backends();
    snprintf(tmp_path, sizeof tmp_path, "%s/percept-fuzz-trace.XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    trace_fd = mkstemp(tmp_path);
    if (trace_fd < 0)
        fuzz_fail("cannot create a temporary file %s", tmp_path);
    /*
     * Replay through /proc/self/fd when it works: the file can then be
     * unlinked at once and a crash leaves nothing behind.
     */
    snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", trace_fd);
    if (access(trace_path, R_OK) == 0) {
        unlink(tmp_path);
        tmp_path[0] = '\0';
    } else {
        snprintf(trace_path, sizeof trace_path, "%.63s", tmp_path);
        atexit(remove_tmp);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char arg0[] = "percept-replay", arg1[] = "--backend", arg2[] = "bruteforce";
    char *argv[] = {arg0, arg1, arg2, trace_path, NULL};
    int status;

    if (ftruncate(trace_fd, 0) != 0 || pwrite(trace_fd, data, size, 0) != (ssize_t)size)
        fuzz_fail("cannot write the trace to %s", trace_path);
    /* A fresh stream each time: replay_main sets its buffer before any output. */
    if (freopen("/dev/null", "w", stdout) == NULL)
        fuzz_fail("cannot redirect stdout to /dev/null");

    status = replay_main(4, argv);
    /* 0: replayed; 1: the trace has an error. 2 would mean the world did not open. */
    if (status != 0 && status != 1)
        fuzz_fail("percept-replay exited with status %d", status);
    return 0;
}
