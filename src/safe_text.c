/*
 * safe_text.c - escaping what a message quotes (see safe_text.h).
 */
#include "safe_text.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"

/* Room to format a message in before it is escaped: more than any message
 * holds (percept_error.text, a world's last message), so that what would
 * have fitted is not lost to the formatting. */
#define RAW_MESSAGE 2048

/* The length (2 to 4) of the valid UTF-8 sequence of more than one byte
 * at s, with its code point in *cp; 0 when the bytes there are not one
 * (overlong, a surrogate, beyond U+10FFFF, cut short: the NUL that ends
 * the text is no continuation byte, so nothing is read past it). */
static size_t utf8_sequence(const unsigned char *s, uint32_t *cp)
{
    size_t len;
    uint32_t c = s[0], least;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, c &= 0x1F, least = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, c &= 0x0F, least = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, c &= 0x07, least = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3Fu);
    }
    if (c < least || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

/* Whether a terminal shows the character as itself: no control, and none
 * of the marks, embeddings, overrides and isolates of bidirectional text,
 * which would show the rest of the line in another order than it has. */
static int shows_as_itself(uint32_t cp)
{
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
        return 0;
    if (cp == 0x061C || cp == 0x200E || cp == 0x200F)
        return 0;
    return !(cp >= 0x202A && cp <= 0x202E) && !(cp >= 0x2066 && cp <= 0x2069);
}

int safe_text_put(char *out, size_t size, size_t *at, const char *in)
{
    if (size == 0)
        return in[0] == '\0';
    size_t n = *at < size ? *at : size - 1;
    const unsigned char *s = (const unsigned char *)in;
    int whole = 1;
    while (*s) {
        uint32_t cp = *s;
        size_t len = cp < 0x80 ? 1 : utf8_sequence(s, &cp);
        int plain = len > 0 && shows_as_itself(cp);
        if (len == 0)
            len = 1; /* a byte of no valid sequence: escaped alone */
        size_t need = plain ? len : 4 * len;
        if (n + need >= size) {
            whole = 0;
            break;
        }
        if (plain) {
            memcpy(out + n, s, len);
        } else {
            for (size_t i = 0; i < len; i++)
                snprintf(out + n + 4 * i, 5, "\\x%02x", s[i]);
        }
        n += need;
        s += len;
    }
    out[n] = '\0';
    *at = n;
    return whole;
}

int safe_text_vprintf(char *out, size_t size, size_t *at, const char *fmt, va_list ap)
{
    char raw[RAW_MESSAGE];
    decimal_vsnprintf(raw, sizeof raw, fmt, ap);
    return safe_text_put(out, size, at, raw);
}
