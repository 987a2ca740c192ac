/*
 * decimal.c - numbers in the "C" locale (see decimal.h).
 */
#include "decimal.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The end of the decimal number starting at p, or NULL if there is none. */
static const char *decimal_end(const char *p)
{
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    for (; *p >= '0' && *p <= '9'; p++)
        digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (digits == 0)
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

int decimal_parse(const char *text, double *out)
{
    const char *start = text;
    while (*start == ' ' || *start == '\t')
        start++;
    const char *end = decimal_end(start);
    if (end == NULL)
        return -1;
    const char *rest = end;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    if (*rest != '\0')
        return -1;
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
    if (stop != end || !isfinite(v))
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
