/*
 * trace_syntax.h - reading a trace (docs/trace-format.md) line by line and
 * checking what each line says, apart from what only the world can tell
 * (whether an ID is in it): the one reader of the format, so that every
 * tool takes and refuses the same lines with the same words.
 */
#ifndef PERCEPT_TRACE_SYNTAX_H
#define PERCEPT_TRACE_SYNTAX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <percept.h>

typedef enum trace_command {
    TRACE_SENSES,
    TRACE_WORLD,
    TRACE_ADD,
    TRACE_MOVE,
    TRACE_FACE,
    TRACE_SET,
    TRACE_REMOVE,
    TRACE_RANGE,
    TRACE_HIDE,
    TRACE_SHOW,
    TRACE_EMIT,
    TRACE_TICK,
    TRACE_END
} trace_command;

/* The fields an add or set names: per kind of sense field, the
 * PERCEPT_SENSE_BIT()s of the senses it names; tags, facing and hide, 1 if
 * named. */
typedef struct trace_given {
    unsigned range, margin, fov, ignore;
    unsigned tags, facing, hide;
} trace_given;

/*
 * One command, checked as far as the line alone can be: its fields' syntax
 * and ranges (a number within 1e15, a fov in (0, 360], ...), its senses
 * among the trace's, a senses or world line before the first add. Whether
 * an ID is in the world, and whether a cone is left without a facing, is
 * the world's to say.
 */
typedef struct trace_line {
    trace_command command;
    percept_id id; /* add, move, face, set, remove, range, hide, show */
    /* add: x, y, z and the fields named (`given`); set: the fields named;
     * move: x, y, z; face: facing. */
    percept_entity_desc desc;
    trace_given given;
    percept_sense sense;       /* range, hide, show */
    double range;              /* range: >= 0 (-0 read as 0) */
    percept_bounds bounds;     /* world */
    percept_stimulus stimulus; /* emit */
} trace_line;

/* Copies the fields `line` names (an add's or a set's) into *desc. */
void trace_apply_fields(const trace_line *line, percept_entity_desc *desc);

/* The longest line read, without its line end: a longer one is an error,
 * so that a file without newlines is not read into memory whole. */
#define TRACE_LINE_MAX 1048576

/* The most bytes of one field of the line that a message quotes. */
#define TRACE_FIELD_SHOWN 200

/* The longest name of a sense, in bytes. */
#define TRACE_SENSE_NAME_MAX 31

/* A trace being read, one line at a time. */
typedef struct trace_reader {
    FILE *in;
    const char *name;             /* the trace in messages: its path, or "<stdin>" for "-" */
    unsigned long line;           /* 1-based number of the line last read */
    unsigned long first_add_line; /* the line of the first add: senses and world come before */
    int cut;                      /* the line last read had no newline (it was the last) */
    int too_long;                 /* the line last read had more than TRACE_LINE_MAX bytes */
    int read_errno;               /* after trace_read_line() returned -1: errno, or 0 */
    char *text;                   /* the line last read, without its line end */
    size_t text_len;              /* its length: a NUL byte in it is a fault, not its end */
    /* The trace's senses, in order: sight, hearing, smell until a senses line. */
    int sense_count;
    char sense_name[PERCEPT_MAX_SENSES][TRACE_SENSE_NAME_MAX + 1];
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

/* The command of the line in r->text (split in place): 1 with *out filled
 * (after a senses line, r's senses are its names); 0 for a blank or comment
 * line; -1 with r->msg saying what is wrong. */
int trace_parse_line(trace_reader *r, trace_line *out);

#endif
