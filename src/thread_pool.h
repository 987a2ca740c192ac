/*
 * thread_pool.h - the threads a world's ticks run on: started with the
 * world, waiting between ticks, and joined when it closes. A job is split
 * into as many parts as the pool has threads, the caller's included.
 */
#ifndef PERCEPT_THREAD_POOL_H
#define PERCEPT_THREAD_POOL_H

#include "percept.h"

typedef struct thread_pool thread_pool;

/* Runs part `part` of a job; parts run at once on different threads. */
typedef void (*pool_job)(void *ctx, unsigned part);

/* A pool of `threads` threads in all: the caller and threads - 1 started
 * here. Returns NULL when memory or a thread cannot be had. */
thread_pool *pool_create(const percept_allocator *a, unsigned threads);
/* Run parts 0 .. threads - 1 of `job`, part 0 on the caller, and return
 * when every part has. */
void pool_run(thread_pool *p, pool_job job, void *ctx);
unsigned pool_threads(const thread_pool *p);
/* Stop and join the threads, then free the pool. NULL is a no-op. */
void pool_destroy(const percept_allocator *a, thread_pool *p);

#endif
