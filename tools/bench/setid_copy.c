/*
 * setid_copy.c - what tests/percept-bench-setid, the copy of percept-bench
 * that setid-env.test runs set-group-ID, has beyond the bench's own sources.
 */

/* LeakSanitizer cannot stop a set-ID process to scan it and would fail it at
 * exit, in a sanitizer build (as for tests/plugin_env_probe); leaks are the
 * other tests' business. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return 1;
}
