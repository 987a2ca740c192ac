/*
 * trace_syntax.h - reading a trace (docs/trace-format.md) line by line and
 * checking what each line says, for percept-replay and percept-bench
 * --trace alike, so that both take and refuse the same lines with the same
 * words.
 */
#ifndef PERCEPT_TRACE_SYNTAX_H
#define PERCEPT_TRACE_SYNTAX_H

#include <stddef.h>
#include <stdio.h>

#include <percept.h>

typedef enum trace_command {
    TRACE_WORLD,
    TRACE_ADD,
    TRACE_MOVE,
    TRACE_REMOVE,
    TRACE_RANGE,
    TRACE_HIDE,
    TRACE_SHOW
} trace_command;

/*
 * One command, checked as far as the line alone can be: its fields' syntax,
 * a world line's bounds and its place before the first add. Whether the
 * entity is in the world, and whether a position or range is within the
 * library's limits, is the caller's to find out.
 */
typedef struct trace_line {
    trace_command command;
    percept_id id;            /* every command but world */
    percept_entity_desc desc; /* add: all of it; move: x and y */
    percept_sense sense;      /* range, hide, show */
    double range;             /* range: >= 0 (-0 read as 0) */
    percept_bounds bounds;    /* world */
} trace_line;

/* The longest line read, without its line end: a longer one is an error,
 * so that a file without newlines is not read into memory whole. */
#define TRACE_LINE_MAX 1048576

/* The most bytes of one field of the line that a message quotes. */
#define TRACE_FIELD_SHOWN 200

/* A trace being read, one line at a time. */
typedef struct trace_reader {
    FILE *in;
    const char *name;             /* the trace in messages: its path, or "<stdin>" for "-" */
    unsigned long line;           /* 1-based number of the line last read */
    unsigned long first_add_line; /* the line of the first add: a world line must come before */
    int cut;                      /* the line last read had no newline (it was the last) */
    int too_long;                 /* the line last read had more than TRACE_LINE_MAX bytes */
    int read_errno;               /* after trace_read_line() returned -1: errno, or 0 */
    char *text;                   /* the line last read, without its line end */
    size_t text_len;              /* its length: a NUL byte in it is a fault, not its end */
    /* After trace_parse_line() returned -1: what is wrong. A message quotes
     * at most two fields, each cut to TRACE_FIELD_SHOWN bytes and "...". */
    char msg[1024];
    char shown[2][TRACE_FIELD_SHOWN + 4];
} trace_reader;

/* Opens `path` ("-": standard input), anything but a directory. Returns
 * NULL, or why it cannot be read (and nothing is left open). */
const char *trace_open(trace_reader *r, const char *path);
void trace_close(trace_reader *r);

/* Reads the next line into r->text, counting it in r->line; a CR before the
 * newline is dropped. 1; 0 at the end; -1 when it cannot be read further
 * (r->read_errno; the line is not counted). */
int trace_read_line(trace_reader *r);

/* The command of the line in r->text (split in place): 1 with *out filled;
 * 0 for a blank or comment line; -1 with r->msg saying what is wrong. */
int trace_parse_line(trace_reader *r, trace_line *out);

#endif
