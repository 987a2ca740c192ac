/*
 * decimal.c - reading a configuration's numbers, and writing numbers into
 * messages, in any locale (see decimal.h).
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

int decimal_underflows(const char *text)
{
    double v;
    if (decimal_parse(text, &v) != 0 || v != 0)
        return 0;
    /* A nonzero digit before the exponent: the number was not zero. */
    size_t digits = strcspn(text, "eE");
    return strcspn(text, "123456789") < digits;
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

/* Drops the exponent's '+' and leading zeros that %g writes ("1e+15" to
 * "1e15", "1e-05" to "1e-5"): how the documentation, the config keys and
 * users write numbers. */
static void tidy_exponent(char *buf)
{
    char *e = strchr(buf, 'e');
    if (e) {
        char *digits = e + 1 + (e[1] == '-'), *from = e + 1 + (e[1] == '+' || e[1] == '-');
        while (from[0] == '0' && from[1] != '\0')
            from++;
        memmove(digits, from, strlen(from) + 1);
    }
}

const char *decimal_exact_text(char *buf, size_t size, double v)
{
    int digits = 6;
    for (; digits < 17; digits++) {
        decimal_snprintf(buf, size, "%.*g", digits, v);
        double back;
        if (decimal_parse(buf, &back) == 0 && back == v)
            break;
    }
    if (digits == 17)
        decimal_snprintf(buf, size, "%.17g", v);
    tidy_exponent(buf);
    return buf;
}

const char *decimal_limit_text(char *buf, size_t size, double v)
{
    decimal_snprintf(buf, size, "%g", v);
    tidy_exponent(buf);
    return buf;
}
