/*
 * decimal.c - numbers in the "C" locale (see decimal.h).
 */
#include "decimal.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int decimal_parse(const char *text, double *out)
{
    const char *start = text + strspn(text, " \t");
    /* strtod() reads the decimal point of the calling thread's locale. The
     * "C" locale object of LC_ALL_MASK is built in: getting it allocates
     * nothing, and uselocale() changes this thread only. */
    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c_locale == (locale_t)0)
        return -1;
    locale_t previous = uselocale(c_locale);
    char *stop;
    double v = strtod(start, &stop);
    uselocale(previous);
    freelocale(c_locale);
    /* strtod() also reads "inf", "nan", hex and leading white space of
     * every kind: none of them is made of these characters alone. */
    size_t n = (size_t)(stop - start);
    if (n == 0 || strspn(start, "0123456789+-.eE") < n || stop[strspn(stop, " \t")] || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int decimal_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t previous = c_locale != (locale_t)0 ? uselocale(c_locale) : (locale_t)0;
    int n = vsnprintf(buf, size, fmt, ap);
    if (c_locale != (locale_t)0) {
        uselocale(previous);
        freelocale(c_locale);
    }
    return n;
}

int decimal_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = decimal_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
