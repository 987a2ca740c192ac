/*
 * trace_syntax.h - the syntax of a trace line (docs/trace-format.md): how
 * percept-replay and percept-bench --trace check its bytes, split it, know
 * its command and read its IDs, numbers, ranges and sense names, so that
 * both take and refuse the same lines with the same words.
 */
#ifndef PERCEPT_TRACE_SYNTAX_H
#define PERCEPT_TRACE_SYNTAX_H

#include <stddef.h>
#include <stdint.h>

#include <percept.h>

/* The most fields a line can have: add ID X Y plus at most one of each of
 * its four options. */
#define TRACE_MAX_FIELDS 8

typedef enum trace_command {
    TRACE_WORLD,
    TRACE_ADD,
    TRACE_MOVE,
    TRACE_REMOVE,
    TRACE_RANGE,
    TRACE_HIDE,
    TRACE_SHOW
} trace_command;

/* 0, or -1 with a message in msg (no "FILE:LINE: " in front) when the
 * line's `len` bytes hold a control character other than tab, which would
 * otherwise end up inside fields and messages (a stray CR, a NUL). */
int trace_check_bytes(const char *s, size_t len, char *msg, size_t size);

/* The command of a split line (n fields, of which the first
 * TRACE_MAX_FIELDS are in `fields`): 1 with *command set when it is known
 * and has a valid number of fields; 0 for a blank or comment line; -1 with
 * a message in msg otherwise. */
int trace_command_of(char **fields, size_t n, trace_command *command, char *msg, size_t size);

/* Splits s in place at spaces and tabs; returns the field count (may exceed
 * max: only the first max are stored). */
size_t trace_split_fields(char *s, char **fields, size_t max);

/* An ID: decimal digits only, 0 .. 4294967295. 0, or -1. */
int trace_parse_id(const char *s, uint32_t *out);

/* A decimal number (integer, fraction, optional exponent), finite. The
 * character check keeps out what strtod would also take: hex, inf, nan.
 * 0, or -1. */
int trace_parse_number(const char *s, double *out);

/* A range: a finite number >= 0 (-0 is taken as 0). 0, or -1. */
int trace_parse_range(const char *s, double *out);

/* A sense name, from the n bytes at s. 0, or -1. */
int trace_parse_sense(const char *s, size_t n, percept_sense *out);

#endif
