/*
 * decimal.h - the one way numbers are read from a configuration, by the core
 * and by the shipped backends alike, whatever the program's locale; and how
 * messages write a limit.
 */
#ifndef PERCEPT_DECIMAL_H
#define PERCEPT_DECIMAL_H

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
 * `v` as a message states a limit, into buf: %g's digits with the
 * exponent's '+' and leading zeros dropped ("1e15", "1e-15", "64"), so that
 * messages written from PERCEPT_COORD_LIMIT read as the documentation and
 * the config keys do. Returns buf.
 */
const char *decimal_limit_text(char *buf, size_t size, double v);

#endif
