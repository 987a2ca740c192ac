/*
 * trace_fields.h - the fields of a trace line (docs/trace-format.md): how
 * percept-replay and percept-bench --trace split a line and read its IDs,
 * numbers, ranges and sense names, so that both take and refuse the same.
 */
#ifndef PERCEPT_TRACE_FIELDS_H
#define PERCEPT_TRACE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include <percept.h>

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
