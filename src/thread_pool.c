/*
 * thread_pool.c - a fixed set of threads woken for each job by a
 * generation count under one mutex: a tick's parts last a millisecond or
 * more, so waking by condition variable costs little beside them.
 */
#include "thread_pool.h"

#include <pthread.h>

#include "alloc.h"

typedef struct worker {
    thread_pool *pool;
    unsigned part;
    pthread_t thread;
} worker;

struct thread_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    unsigned threads;
    unsigned long generation; /* raised once per job */
    unsigned busy;            /* parts of the current job still running */
    int stopping;
    pool_job job;
    void *ctx;
    worker workers[]; /* threads - 1 */
};

static void *work(void *arg)
{
    worker *self = arg;
    thread_pool *p = self->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && !p->stopping)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stopping)
            break;
        seen = p->generation;
        pool_job job = p->job;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->lock);
        job(ctx, self->part);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Stop and join the first `started` workers. */
static void stop(thread_pool *p, unsigned started)
{
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(p->workers[i].thread, NULL);
}

thread_pool *pool_create(const percept_allocator *a, unsigned threads)
{
    thread_pool *p = pc_alloc(a, sizeof *p + (threads - 1) * sizeof(worker));
    if (!p)
        return NULL;
    *p = (thread_pool){.threads = threads};
    if (pthread_mutex_init(&p->lock, NULL)) {
        pc_free(a, p);
        return NULL;
    }
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned i = 0; i + 1 < threads; i++) {
        p->workers[i] = (worker){.pool = p, .part = i + 1};
        if (pthread_create(&p->workers[i].thread, NULL, work, &p->workers[i])) {
            stop(p, i);
            pthread_cond_destroy(&p->wake);
            pthread_cond_destroy(&p->done);
            pthread_mutex_destroy(&p->lock);
            pc_free(a, p);
            return NULL;
        }
    }
    return p;
}

void pool_run(thread_pool *p, pool_job job, void *ctx)
{
    pthread_mutex_lock(&p->lock);
    p->job = job;
    p->ctx = ctx;
    p->busy = p->threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    job(ctx, 0);
    pthread_mutex_lock(&p->lock);
    while (p->busy)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

unsigned pool_threads(const thread_pool *p)
{
    return p->threads;
}

void pool_destroy(const percept_allocator *a, thread_pool *p)
{
    if (!p)
        return;
    stop(p, p->threads - 1);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    pc_free(a, p);
}
