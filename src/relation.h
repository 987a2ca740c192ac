/*
 * relation.h - the relation's test of one pair, both ways at once, as
 * docs/trace-format.md specifies it: the single calls and the tick share it.
 */
#ifndef PERCEPT_RELATION_H
#define PERCEPT_RELATION_H

#if defined(__SSE2__) && !defined(PERCEPT_NO_SIMD)
#include <emmintrin.h>
#endif

#include "world.h"

/*
 * Which senses hold both ways at squared distance dd for ranges alone: bit
 * s of *sees when dd <= r[s] * r[s], of *seen when dd <= q[s] * q[s]; a
 * NaN range (a lacking sense) satisfies none. Branch-free, as which senses
 * hold is as good as random. For three senses SSE2 does the same IEEE
 * operations two at a time, so it gives the same bits; PERCEPT_NO_SIMD
 * selects the plain form.
 */
static inline void senses_within(double dd, const double *r, const double *q, int n, unsigned *sees,
                                 unsigned *seen)
{
#if defined(__SSE2__) && !defined(PERCEPT_NO_SIMD)
    if (n == 3) {
        __m128d d = _mm_set1_pd(dd);
        __m128d r01 = _mm_loadu_pd(r), q01 = _mm_loadu_pd(q), rq2 = _mm_set_pd(q[2], r[2]);
        unsigned lo = (unsigned)_mm_movemask_pd(_mm_cmple_pd(d, _mm_mul_pd(r01, r01)));
        unsigned hi = (unsigned)_mm_movemask_pd(_mm_cmple_pd(d, _mm_mul_pd(q01, q01)));
        unsigned third = (unsigned)_mm_movemask_pd(_mm_cmple_pd(d, _mm_mul_pd(rq2, rq2)));
        *sees = lo | (third & 1) << 2;
        *seen = hi | (third & 2) << 1;
        return;
    }
#endif
    unsigned a = 0, b = 0;
    for (int s = 0; s < n; s++) {
        a |= (unsigned)(dd <= r[s] * r[s]) << s;
        b |= (unsigned)(dd <= q[s] * q[s]) << s;
    }
    *sees = a;
    *seen = b;
}

/* Whether d lies in the cone of the facing of `os` with constant c (the
 * relation's rule 6), dd being d's squared length. */
static inline int in_cone(const shape *os, double c, double dx, double dy, double dz, double dd)
{
    double dot = os->facing[0] * dx + os->facing[1] * dy + os->facing[2] * dz;
    double q = c * c * (dd * os->ff);
    if (c >= 0)
        return dot >= 0 && dot * dot >= q;
    return dot >= 0 || dot * dot <= q;
}

/* pair_mask_of() when either entity has a shape: out of line, so that the
 * common test stays small enough to inline. */
__attribute__((noinline)) unsigned shaped_pair_mask(int n, const entity *me, const shape *msh,
                                                    const entity *t, const shape *tsh, unsigned out,
                                                    unsigned in_visible, unsigned before);

/* The pair of `me` and `t` (their shapes msh and tsh, NULL for none) as
 * me's list keeps it: the senses of `out` in which me perceives t, and of
 * `in_visible` in which t perceives me; `before`, the pair's mask before the
 * call. Negating a difference is exact, so one squared distance serves
 * both directions. */
static inline unsigned pair_mask_of(int n, const entity *me, const shape *msh, const entity *t,
                                    const shape *tsh, unsigned out, unsigned in_visible,
                                    unsigned before)
{
    out &= ~(unsigned)t->hidden;
    if (msh || tsh)
        return shaped_pair_mask(n, me, msh, t, tsh, out, in_visible, before);
    double dx = t->x - me->x, dy = t->y - me->y, dz = t->z - me->z;
    double dd = dx * dx + dy * dy + dz * dz;
    unsigned sees, seen;
    senses_within(dd, me->range, t->range, n, &sees, &seen);
    return (sees & out) | (seen & in_visible) << PAIR_IN_SHIFT;
}

/* A public range as a record keeps it: NaN for 0 or -0, a lacking sense. */
static inline double entity_range(double range)
{
    return range > 0 ? range : NAN;
}

/* The largest of an entity's ranges among `senses`: what an index must cover. */
static inline double reach_of(const entity *e, unsigned senses)
{
    double r = 0;
    for (; senses; senses &= senses - 1) {
        int s = __builtin_ctz(senses);
        if (e->range[s] > r)
            r = e->range[s];
    }
    return r;
}

/* Whether backend group bg must hear of an entity going from `old` to
 * `next`: a new place, or a new `reach` (next's among bg's senses). */
static inline int world_backend_moved(const entity *old, const entity *next,
                                      const backend_group *bg, double reach)
{
    return old->x != next->x || old->y != next->y || old->z != next->z ||
           reach_of(old, bg->senses) != reach;
}

#endif
