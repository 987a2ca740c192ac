/*
 * test_version.c - the version a program can check at run time: the
 * library's answer, the header's macros and configure's package version
 * (AC_INIT, the one place a release sets it) must all agree.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <percept.h>

static void test_runtime_matches_package(void **state)
{
    (void)state;
    assert_string_equal(percept_version(), PACKAGE_VERSION);
    assert_string_equal(PERCEPT_VERSION, PACKAGE_VERSION);
}

/* The number is major*10000 + minor*100 + patch of the text. */
static void test_number_matches_text(void **state)
{
    (void)state;
    int major = -1, minor = -1, patch = -1, end = 0;
    const char *text = percept_version();
    assert_int_equal(sscanf(text, "%d.%d.%d%n", &major, &minor, &patch, &end), 3);
    assert_int_equal(text[end], '\0');
    assert_true(minor >= 0 && minor < 100 && patch >= 0 && patch < 100);
    assert_int_equal(percept_version_number(), major * 10000 + minor * 100 + patch);
    assert_int_equal(PERCEPT_VERSION_NUMBER, percept_version_number());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_matches_package),
        cmocka_unit_test(test_number_matches_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
