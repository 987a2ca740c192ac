/*
 * decimal.h - numbers read from a configuration and written into messages
 * with '.' as the decimal point, whatever locale the server has set: the
 * core and the shipped backends read and write them one way.
 */
#ifndef PERCEPT_DECIMAL_H
#define PERCEPT_DECIMAL_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A plain decimal number: optional blanks, an optional sign, digits with an
 * optional fraction ("12", "12.5", ".5", "5."), an optional exponent
 * ("1e6"), optional blanks, nothing else. "inf", "nan", hex forms and values
 * too large for a double are refused. Returns 0 and sets *out, or -1.
 */
int decimal_parse(const char *text, double *out);

/* vsnprintf() and snprintf() in the "C" locale. */
int decimal_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
int decimal_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
