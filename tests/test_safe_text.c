/*
 * test_safe_text.c - what a message shows of text the library was given
 * (src/safe_text.c): valid UTF-8 as it is, except the controls and the
 * characters that reorder bidirectional text; every other byte as \xNN;
 * cut on whole characters and escapes. Each expected text is written out
 * by hand from the UTF-8 and Unicode definitions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "safe_text.h"

/* The text `in` gives in a buffer of `size`, written from offset 0. */
static void expect_shown(const char *in, const char *shown)
{
    char out[256];
    memset(out, '#', sizeof out);
    size_t at = 0;
    assert_int_equal(safe_text_put(out, sizeof out, &at, in), 1);
    assert_string_equal(out, shown);
    assert_int_equal(at, strlen(shown));
}

static void test_kept_as_written(void **state)
{
    (void)state;
    expect_shown("", "");
    expect_shown("key 'cell_size' in [sight]", "key 'cell_size' in [sight]");
    expect_shown("gr\xC3\xB6\xC3\x9F"
                 "e",
                 "gr\xC3\xB6\xC3\x9F"
                 "e");                                    /* U+00F6, U+00DF: two bytes */
    expect_shown("\xE2\x82\xAC", "\xE2\x82\xAC");         /* U+20AC: three */
    expect_shown("\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"); /* U+1F600: four */
    expect_shown("\xC2\xA0", "\xC2\xA0");                 /* U+00A0, just past C1 */
    expect_shown("\xE2\x80\xAF", "\xE2\x80\xAF");         /* U+202F, just past the overrides */
    expect_shown("\xE2\x81\xB0", "\xE2\x81\xB0");         /* U+2070, just past the isolates */
    expect_shown("\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"); /* U+10FFFF, the last */
    expect_shown("back\\slash", "back\\slash");
}

static void test_bytes_of_no_character(void **state)
{
    (void)state;
    expect_shown("a\xFF"
                 "b",
                 "a\\xff"
                 "b");
    expect_shown("\x80", "\\x80");                            /* a continuation alone */
    expect_shown("\xC0\xAF", "\\xc0\\xaf");                   /* overlong '/' */
    expect_shown("\xE0\x80\xAF", "\\xe0\\x80\\xaf");          /* overlong, three bytes */
    expect_shown("\xED\xA0\x80", "\\xed\\xa0\\x80");          /* a surrogate, U+D800 */
    expect_shown("\xF4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* U+110000 */
    expect_shown("\xF5\x80\x80\x80", "\\xf5\\x80\\x80\\x80");
    expect_shown("ab\xE2\x82", "ab\\xe2\\x82");            /* cut short by the end */
    expect_shown("\xE2\x82x", "\\xe2\\x82x");              /* cut short by an ASCII byte */
    expect_shown("\xE2\xE2\x82\xAC", "\\xe2\xE2\x82\xAC"); /* the next lead starts anew */
}

static void test_controls_escaped(void **state)
{
    (void)state;
    expect_shown("a\tb", "a\\x09b");
    expect_shown("\x1B[2J", "\\x1b[2J");
    expect_shown("\r\n", "\\x0d\\x0a");
    expect_shown("\x7F", "\\x7f");
    expect_shown("\xC2\x80", "\\xc2\\x80"); /* U+0080 */
    expect_shown("\xC2\x9B", "\\xc2\\x9b"); /* U+009B, CSI */
    expect_shown("\xC2\x9F", "\\xc2\\x9f"); /* U+009F */
}

static void test_bidirectional_controls_escaped(void **state)
{
    (void)state;
    expect_shown("1\xE2\x80\xAE"
                 "0",
                 "1\\xe2\\x80\\xae"
                 "0");                               /* U+202E RIGHT-TO-LEFT OVERRIDE */
    expect_shown("\xE2\x80\xAA", "\\xe2\\x80\\xaa"); /* U+202A */
    expect_shown("\xE2\x81\xA6", "\\xe2\\x81\\xa6"); /* U+2066 */
    expect_shown("\xE2\x81\xA9", "\\xe2\\x81\\xa9"); /* U+2069 */
    expect_shown("\xE2\x80\x8E\xE2\x80\x8F", "\\xe2\\x80\\x8e\\xe2\\x80\\x8f"); /* U+200E, U+200F */
    expect_shown("\xD8\x9C", "\\xd8\\x9c"); /* U+061C ARABIC LETTER MARK */
}

/* Too little room: what fits, ending before the first character or escape
 * that does not, and 0 for "cut". */
static void test_cut_whole(void **state)
{
    (void)state;
    char out[8];
    size_t at = 0;
    assert_int_equal(safe_text_put(out, sizeof out, &at, "abcdefghij"), 0);
    assert_string_equal(out, "abcdefg");
    assert_int_equal(at, 7);

    at = 0;
    assert_int_equal(safe_text_put(out, sizeof out, &at, "abcde\xFF"), 0);
    assert_string_equal(out, "abcde"); /* "\xff" takes four: one too many */
    assert_int_equal(at, 5);

    at = 0;
    assert_int_equal(safe_text_put(out, 6, &at, "abc\xE2\x82\xAC"), 0);
    assert_string_equal(out, "abc");
    at = 0;
    assert_int_equal(safe_text_put(out, 7, &at, "abc\xE2\x82\xAC"), 1);
    assert_string_equal(out, "abc\xE2\x82\xAC");
}

/* Written after what is there; an offset past the end writes nothing. */
static void test_appends(void **state)
{
    (void)state;
    char out[16] = "ab";
    size_t at = 2;
    assert_int_equal(safe_text_put(out, sizeof out, &at, "c\xFF"), 1);
    assert_string_equal(out, "abc\\xff");
    assert_int_equal(at, 7);
    assert_int_equal(safe_text_put(out, sizeof out, &at, ""), 1);
    assert_int_equal(at, 7);

    char small[4] = "xyz";
    at = 10;
    assert_int_equal(safe_text_put(small, sizeof small, &at, "q"), 0);
    assert_string_equal(small, "xyz");
    assert_int_equal(at, 3);
    assert_int_equal(safe_text_put(small, 0, &at, ""), 1);
    assert_int_equal(safe_text_put(small, 0, &at, "q"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_as_written),
        cmocka_unit_test(test_bytes_of_no_character),
        cmocka_unit_test(test_controls_escaped),
        cmocka_unit_test(test_bidirectional_controls_escaped),
        cmocka_unit_test(test_cut_whole),
        cmocka_unit_test(test_appends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
