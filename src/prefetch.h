/*
 * prefetch.h - asking the processor to start loading memory read soon: once
 * a world outgrows the caches, a change waits on its partners' records and
 * pair lists, scattered over the heap, and asking for them all first lets
 * those waits overlap. A hint only: the results are the same without it.
 */
#ifndef PERCEPT_PREFETCH_H
#define PERCEPT_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define prefetch_read(p) __builtin_prefetch((p), 0)
#define prefetch_write(p) __builtin_prefetch((p), 1)
#else
#define prefetch_read(p) ((void)(p))
#define prefetch_write(p) ((void)(p))
#endif

#endif
