/*
 * safe_text.h - text the library was given (a config file's bytes, a
 * path, a plugin's name or reason), written into a message the way a
 * terminal can show it without being steered by it: valid UTF-8 stays as
 * it is, so that a name in any script reads as written, while a byte that
 * is not part of valid UTF-8, a control character (C0, DEL, C1) and the
 * characters that reorder bidirectional text are written as \xNN, one
 * escape per byte. Messages are built whole and then written through here,
 * so no caller has to remember which of its arguments came from outside.
 */
#ifndef PERCEPT_SAFE_TEXT_H
#define PERCEPT_SAFE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

/*
 * Writes `in` into out[*at .. size), as much as fits without cutting a
 * character or an escape in two, always ending the text with a NUL (size
 * > 0), and advances *at past what it wrote. Returns 1 when all of `in`
 * was written, 0 when it was cut.
 */
int safe_text_put(char *out, size_t size, size_t *at, const char *in);

/*
 * Formats a message (decimal_vsnprintf(): numbers with '.' in any locale)
 * and writes it with safe_text_put(): what the library's messages are
 * made with, since any argument may quote text from outside.
 */
int safe_text_vprintf(char *out, size_t size, size_t *at, const char *fmt, va_list ap);

#endif
