/*
 * relation.c - the pair test's slow part: margins, cones and ignore masks.
 */
#include "relation.h"

/* The senses among `senses` in which o, of shape os, perceives t by rules 2
 * and 4 to 6: d = t - o, dd its squared length, `before` the senses o
 * perceived t in before the call (a margin holds those). */
static unsigned shaped_senses(const entity *o, const shape *os, const entity *t, unsigned senses,
                              unsigned before, double dx, double dy, double dz, double dd)
{
    unsigned held = 0;
    for (; senses; senses &= senses - 1) {
        int s = __builtin_ctz(senses);
        const sense_shape *ss = &os->sense[s];
        double l = o->range[s];
        if (ss->ignore & t->tags)
            continue;
        if (before & PERCEPT_SENSE_BIT(s))
            l = l + ss->margin;
        if (!(dd <= l * l))
            continue;
        if (ss->fov != 360 && dd != 0 && !in_cone(os, ss->c, dx, dy, dz, dd))
            continue;
        held |= PERCEPT_SENSE_BIT(s);
    }
    return held;
}

unsigned shaped_pair_mask(int n, const entity *me, const shape *msh, const entity *t,
                          const shape *tsh, unsigned out, unsigned in_visible, unsigned before)
{
    double dx = t->x - me->x, dy = t->y - me->y, dz = t->z - me->z;
    double dd = dx * dx + dy * dy + dz * dz;
    unsigned sees, seen;
    senses_within(dd, me->range, t->range, n, &sees, &seen);
    if (msh)
        sees = shaped_senses(me, msh, t, out, pair_out(before), dx, dy, dz, dd);
    if (tsh)
        seen = shaped_senses(t, tsh, me, in_visible, pair_in(before), -dx, -dy, -dz, dd);
    return (sees & out) | (seen & in_visible) << PAIR_IN_SHIFT;
}
