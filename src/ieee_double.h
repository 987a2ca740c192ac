/*
 * ieee_double.h - stops a build whose arithmetic is not the one the
 * relation is specified in: dx*dx + dy*dy <= R*R in IEEE double
 * (docs/GUARANTEES.md). The core computes the relation, and the shipped
 * backends' candidate tests and NaN markers assume the same arithmetic.
 * configure refuses such flags first; this catches builds that bypass it.
 */
#ifndef PERCEPT_IEEE_DOUBLE_H
#define PERCEPT_IEEE_DOUBLE_H

#include <float.h>

/* Each #error on one line, as the compiler prints it. */
/* clang-format off */

/* Double expressions evaluated in double: x87 code (32-bit x86 without
 * SSE2 math) keeps 80-bit intermediates, and a pair on a range's boundary
 * would round otherwise than the specification says. 1, as GCC says for
 * s390x in ISO C mode, evaluates float in double: exact for doubles. */
#if !defined(FLT_EVAL_METHOD) || (FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != 1)
#error "percept needs double expressions evaluated in double (FLT_EVAL_METHOD 0 or 1): on 32-bit x86, build with -msse2 -mfpmath=sse"
#endif

/* No -ffast-math or -ffinite-math-only: a lacking sense's range is NaN, a
 * far entry's offset in a cell is NaN, and both rely on NaN failing every
 * comparison; reassociated sums would also round boundaries differently. */
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "percept must not be built with -ffast-math or -ffinite-math-only: its relation needs IEEE arithmetic with NaNs"
#endif
/* clang-format on */

#endif
