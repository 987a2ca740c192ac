/*
 * key_sort.h - sorting 64-bit keys: a 32-bit sort key (an ID, a place in the
 * world) above a 32-bit index, unique in the array, so no two keys are
 * equal. The delivery order of a call's events and the order of a batch of
 * moves are sorted this way.
 */
#ifndef PERCEPT_KEY_SORT_H
#define PERCEPT_KEY_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort keys[0 .. n) ascending, using scratch[0 .. n) as room. Never fails.
 * The low halves must be the indices 0 .. n - 1 in order: the radix sort
 * orders the high halves only, and keeps keys whose high halves are equal
 * in the order they came. */
void key_sort(uint64_t *keys, uint64_t *scratch, size_t n);

#endif
