/*
 * unused_params.h - the note percept-sim and percept-replay print when
 * --backend NAME is forced over a --config whose sense sections tune
 * another backend: the library passes those parameters to no one (see
 * percept_options.backend), and an operator comparing backends should know
 * that the tuned ones are not in effect.
 */
#ifndef PERCEPT_TOOLS_UNUSED_PARAMS_H
#define PERCEPT_TOOLS_UNUSED_PARAMS_H

#include <stdio.h>

/*
 * Reads `config` and, for each sense section with backend parameters whose
 * backend (its own `backend` key, else [percept]'s) is not `forced`, writes
 * "PROGRAM: note: --backend FORCED: [SENSE] tunes backend 'NAME'; its
 * parameters there are not used: KEY, KEY" to `out`. Says nothing when the
 * file cannot be read: the world opened from it already.
 */
void note_unused_params(FILE *out, const char *program, const char *config, const char *forced);

#endif
