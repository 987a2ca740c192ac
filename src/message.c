/*
 * message.c - message_vformat(): see message.h.
 */
#include "message.h"

#include <stdio.h>

#include "decimal.h"

void message_vformat(char *out, size_t size, const char *fmt, va_list ap)
{
    char raw[1024];
    decimal_vsnprintf(raw, sizeof raw, fmt, ap);
    size_t at = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
        int control = *p < 0x20 || *p == 0x7f;
        size_t need = control ? 4 : 1;
        if (at + need >= size)
            break;
        if (control)
            snprintf(out + at, 5, "\\x%02x", *p);
        else
            out[at] = (char)*p;
        at += need;
    }
    out[at] = '\0';
}

void message_format(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message_vformat(out, size, fmt, ap);
    va_end(ap);
}
