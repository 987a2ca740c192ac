/*
 * message.h - how the library writes a message: numbers with '.' in any
 * locale, and each control byte of the text it quotes (a config line, a
 * path) as \xNN, so that a message is one printable line.
 */
#ifndef PERCEPT_MESSAGE_H
#define PERCEPT_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into out[size] (size > 0), cut to fit. */
void message_vformat(char *out, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void message_format(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
