/*
 * prefetch.h - asking the processor to start loading memory the code reads
 * soon. In a world no cache holds (some 100k entities and up) one change
 * waits for memory dozens of times: its partners' records, the backend's
 * cells, the partners' pair lists, each scattered over the heap. Most of
 * those addresses are known some time before they are read, and asking for
 * them all at once lets the waits overlap instead of adding up. A hint
 * only: results are the same without it, as they are with a compiler that
 * has no such builtin.
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
