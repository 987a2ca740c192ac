/*
 * decimal.h - the one way numbers are read from a configuration, by the core
 * and by the shipped backends alike, whatever the program's locale; and how
 * messages write numbers, with '.' whatever the locale too.
 */
#ifndef PERCEPT_DECIMAL_H
#define PERCEPT_DECIMAL_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A plain decimal number: optional blanks, an optional sign, digits with an
 * optional fraction ("12", "12.5", ".5", "5."), an optional exponent
 * ("1e6"), optional blanks, nothing else. "inf", "nan" and hex forms, which
 * strtod() would take, are refused, and so is a value too large for a
 * double. The decimal point is '.' even when the program has set a locale
 * whose point is ',' (a server may call setlocale() for its own text).
 * Returns 0 and sets *out, or -1.
 */
int decimal_parse(const char *text, double *out);

/*
 * Whether `text` is a plain decimal number that decimal_parse() reads as 0
 * although it is not zero ("1e-400": below the smallest double), so that a
 * message refusing the 0 can say why a positive number was taken for it.
 */
int decimal_underflows(const char *text);

/*
 * `v` as a message states a limit, into buf: %g's digits with the
 * exponent's '+' and leading zeros dropped ("1e15", "1e-15", "64"), so that
 * messages written from PERCEPT_COORD_LIMIT read as the documentation and
 * the config keys do. Returns buf.
 */
const char *decimal_limit_text(char *buf, size_t size, double v);

/*
 * `v` in the fewest digits that read back as `v` (up to 17), its exponent
 * written as decimal_limit_text() writes it ("1e16"), for a message that
 * quotes a refused value: %g would show 1e15 + 0.125 as 1e15. Returns buf.
 */
const char *decimal_exact_text(char *buf, size_t size, double v);

/*
 * vsnprintf() and snprintf() with the "C" locale's '.' as the decimal point,
 * whatever the calling thread's locale: every message the library writes
 * goes through them, so that "0,5" in a server that set a German locale
 * cannot be read as two numbers. (Should the "C" locale object be
 * unavailable, the thread's locale is used.)
 */
int decimal_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
int decimal_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
