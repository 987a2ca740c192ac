/*
 * homemade.c - the competitor of homemade.h: a counting sort into a grid of
 * cells as wide as the largest range, then for each entity a scan of the
 * 3 x 3 cells around its own, its list sorted and merged with its last one.
 * Flat arrays throughout. The threads share out the entities in the grid's
 * order, so that each reads cells close in memory, and wait between ticks
 * in a pool started once.
 */
#include "homemade.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The grid stays below this many cells: wider cells find the same pairs. */
#define MAX_CELLS (1u << 22)
/* Lists up to this long are sorted by insertion, longer ones by qsort(). */
#define INSERTION_SORT_MAX 32

/* One thread's neighbour lists of a tick, one after another. */
typedef struct list_buffer {
    uint32_t *ids;
    size_t len, cap;
} list_buffer;

/* A tick's lists: entity id's is len[id] IDs at off[id] in buf[owner[id]]. */
typedef struct lists {
    list_buffer buf[HOMEMADE_MAX_THREADS];
    size_t *off;
    uint32_t *len;
    uint8_t *owner;
} lists;

typedef struct worker {
    homemade *h;
    size_t index;
    pthread_t thread;
    uint64_t enters, leaves;
    int out_of_memory;
} worker;

struct homemade {
    size_t n, threads;
    double *x, *y, *z, *r2; /* by ID; r2: the range squared */
    double min_x, min_y, cell;
    size_t cols, rows;
    uint32_t *cell_of;    /* by ID */
    uint32_t *start;      /* [cells + 1]: cell c holds entities [start[c], start[c + 1]) */
    uint32_t *fill;       /* [cells]: the counting sort's cursors */
    double *sx, *sy, *sz; /* the positions in the grid's order */
    uint32_t *sid;        /* the IDs in the grid's order */
    lists list[2];        /* list[cur]: this tick's; the other: the last tick's */
    int cur;
    worker workers[HOMEMADE_MAX_THREADS];
    size_t started; /* threads of the pool running */
    int synced;     /* lock, go and done are made */
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    unsigned generation; /* a new tick for the pool */
    size_t running;      /* pool threads still at work on it */
    int quit;
};

/* The cell along one axis; clamping keeps neighbours in neighbouring cells. */
static size_t cell_index(double v, double lo, double cell, size_t count)
{
    double f = (v - lo) / cell;
    if (!(f >= 0))
        return 0;
    return f < (double)count ? (size_t)f : count - 1;
}

static void sort_into_grid(homemade *h)
{
    size_t cells = h->cols * h->rows;
    memset(h->start, 0, (cells + 1) * sizeof *h->start);
    for (size_t i = 0; i < h->n; i++) {
        size_t cx = cell_index(h->x[i], h->min_x, h->cell, h->cols);
        size_t cy = cell_index(h->y[i], h->min_y, h->cell, h->rows);
        h->cell_of[i] = (uint32_t)(cy * h->cols + cx);
        h->start[h->cell_of[i] + 1]++;
    }
    for (size_t c = 0; c < cells; c++)
        h->start[c + 1] += h->start[c];
    memcpy(h->fill, h->start, cells * sizeof *h->fill);
    for (size_t i = 0; i < h->n; i++) {
        uint32_t k = h->fill[h->cell_of[i]]++;
        h->sx[k] = h->x[i];
        h->sy[k] = h->y[i];
        h->sz[k] = h->z[i];
        h->sid[k] = (uint32_t)i;
    }
}

static int compare_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void sort_ids(uint32_t *ids, size_t len)
{
    if (len > INSERTION_SORT_MAX) {
        qsort(ids, len, sizeof *ids, compare_ids);
        return;
    }
    for (size_t i = 1; i < len; i++) {
        uint32_t v = ids[i];
        size_t j = i;
        for (; j > 0 && ids[j - 1] > v; j--)
            ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

/* The IDs two sorted lists share. */
static size_t count_common(const uint32_t *a, size_t a_len, const uint32_t *b, size_t b_len)
{
    size_t i = 0, j = 0, common = 0;
    while (i < a_len && j < b_len) {
        if (a[i] == b[j])
            common++, i++, j++;
        else if (a[i] < b[j])
            i++;
        else
            j++;
    }
    return common;
}

static int reserve(list_buffer *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap * 2 > need ? b->cap * 2 : need < 1024 ? 1024 : need;
    uint32_t *ids = realloc(b->ids, cap * sizeof *ids);
    if (!ids)
        return -1;
    b->ids = ids;
    b->cap = cap;
    return 0;
}

/* Worker w's share of a tick: the lists of its entities and their changes.
 * Counters stay in locals until the end: the workers' structs share cache
 * lines, and writing them per entity would make the threads fight over them. */
static void find_lists(homemade *h, worker *w)
{
    lists *cur = &h->list[h->cur];
    const lists *last = &h->list[!h->cur];
    list_buffer out = cur->buf[w->index];
    size_t begin = h->n * w->index / h->threads, end = h->n * (w->index + 1) / h->threads;
    size_t cols = h->cols, used = 0;
    uint64_t enters = 0, leaves = 0;
    w->out_of_memory = 0;
    for (size_t k = begin; k < end; k++) {
        uint32_t id = h->sid[k], c = h->cell_of[id];
        size_t cx = c % cols, cy = c / cols;
        size_t x0 = cx ? cx - 1 : 0, x1 = cx + 1 < cols ? cx + 1 : cx;
        size_t y0 = cy ? cy - 1 : 0, y1 = cy + 1 < h->rows ? cy + 1 : cy;
        /* The cells of a row are consecutive: three spans of the sorted arrays. */
        size_t candidates = 0;
        for (size_t y = y0; y <= y1; y++)
            candidates += h->start[y * cols + x1 + 1] - h->start[y * cols + x0];
        if (reserve(&out, used + candidates)) {
            w->out_of_memory = 1;
            break;
        }
        uint32_t *list = out.ids + used;
        size_t len = 0;
        double ox = h->sx[k], oy = h->sy[k], oz = h->sz[k], r2 = h->r2[id];
        for (size_t y = y0; y <= y1; y++)
            for (size_t j = h->start[y * cols + x0], e = h->start[y * cols + x1 + 1]; j < e; j++) {
                double dx = h->sx[j] - ox, dy = h->sy[j] - oy, dz = h->sz[j] - oz;
                if (dx * dx + dy * dy + dz * dz <= r2 && j != k)
                    list[len++] = h->sid[j];
            }
        sort_ids(list, len);
        cur->off[id] = used;
        cur->len[id] = (uint32_t)len;
        cur->owner[id] = (uint8_t)w->index;
        used += len;
        size_t last_len = last->len[id];
        size_t common =
            last_len
                ? count_common(list, len, last->buf[last->owner[id]].ids + last->off[id], last_len)
                : 0;
        enters += len - common;
        leaves += last_len - common;
    }
    out.len = used;
    cur->buf[w->index] = out;
    w->enters = enters;
    w->leaves = leaves;
}

static void *pool_thread(void *arg)
{
    worker *w = arg;
    homemade *h = w->h;
    unsigned seen = 0;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->quit && h->generation == seen)
            pthread_cond_wait(&h->go, &h->lock);
        if (h->quit)
            break;
        seen = h->generation;
        pthread_mutex_unlock(&h->lock);
        find_lists(h, w);
        pthread_mutex_lock(&h->lock);
        if (--h->running == 0)
            pthread_cond_signal(&h->done);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int homemade_tick(homemade *h, uint64_t *enters, uint64_t *leaves)
{
    sort_into_grid(h);
    h->cur = !h->cur;
    if (h->threads > 1) {
        pthread_mutex_lock(&h->lock);
        h->running = h->threads - 1;
        h->generation++;
        pthread_cond_broadcast(&h->go);
        pthread_mutex_unlock(&h->lock);
    }
    find_lists(h, &h->workers[0]);
    if (h->threads > 1) {
        pthread_mutex_lock(&h->lock);
        while (h->running)
            pthread_cond_wait(&h->done, &h->lock);
        pthread_mutex_unlock(&h->lock);
    }
    int bad = 0;
    *enters = *leaves = 0;
    for (size_t t = 0; t < h->threads; t++) {
        bad |= h->workers[t].out_of_memory;
        *enters += h->workers[t].enters;
        *leaves += h->workers[t].leaves;
    }
    return bad ? -1 : 0;
}

void homemade_place(homemade *h, uint32_t id, double x, double y, double z)
{
    h->x[id] = x;
    h->y[id] = y;
    h->z[id] = z;
}

homemade *homemade_open(const percept_bounds *bounds, size_t n, const double *range, size_t threads)
{
    if (threads < 1 || threads > HOMEMADE_MAX_THREADS || n > UINT32_MAX)
        return NULL;
    homemade *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->n = n;
    h->threads = threads;
    double widest = 0;
    for (size_t i = 0; i < n; i++)
        widest = range[i] > widest ? range[i] : widest;
    /* A hair wider than the widest range, so that rounding in the cell of a
     * coordinate never puts two entities in range two cells apart. */
    h->cell = widest > 0 ? widest * (1 + 1e-9) : 1;
    double w = bounds->max_x - bounds->min_x, d = bounds->max_y - bounds->min_y;
    while ((w / h->cell + 1) * (d / h->cell + 1) > MAX_CELLS)
        h->cell *= 2;
    h->min_x = bounds->min_x;
    h->min_y = bounds->min_y;
    h->cols = (size_t)(w / h->cell) + 1;
    h->rows = (size_t)(d / h->cell) + 1;
    size_t cells = h->cols * h->rows, m = n ? n : 1;
    int bad = !(h->x = calloc(m, sizeof *h->x)) || !(h->y = calloc(m, sizeof *h->y)) ||
              !(h->z = calloc(m, sizeof *h->z)) || !(h->r2 = malloc(m * sizeof *h->r2)) ||
              !(h->cell_of = malloc(m * sizeof *h->cell_of)) ||
              !(h->start = malloc((cells + 1) * sizeof *h->start)) ||
              !(h->fill = malloc(cells * sizeof *h->fill)) ||
              !(h->sx = malloc(m * sizeof *h->sx)) || !(h->sy = malloc(m * sizeof *h->sy)) ||
              !(h->sz = malloc(m * sizeof *h->sz)) || !(h->sid = malloc(m * sizeof *h->sid));
    for (int s = 0; s < 2 && !bad; s++)
        bad = !(h->list[s].off = calloc(m, sizeof *h->list[s].off)) ||
              !(h->list[s].len = calloc(m, sizeof *h->list[s].len)) ||
              !(h->list[s].owner = calloc(m, sizeof *h->list[s].owner));
    for (size_t i = 0; i < n && !bad; i++)
        h->r2[i] = range[i] * range[i];
    if (bad) {
        homemade_close(h);
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->go, NULL);
    pthread_cond_init(&h->done, NULL);
    h->synced = 1;
    for (size_t t = 0; t < threads; t++)
        h->workers[t] = (worker){.h = h, .index = t};
    for (size_t t = 1; t < threads; t++, h->started++)
        if (pthread_create(&h->workers[t].thread, NULL, pool_thread, &h->workers[t]) != 0) {
            homemade_close(h);
            return NULL;
        }
    return h;
}

void homemade_close(homemade *h)
{
    if (!h)
        return;
    if (h->synced) {
        pthread_mutex_lock(&h->lock);
        h->quit = 1;
        pthread_cond_broadcast(&h->go);
        pthread_mutex_unlock(&h->lock);
        for (size_t t = 1; t <= h->started; t++)
            pthread_join(h->workers[t].thread, NULL);
        pthread_cond_destroy(&h->go);
        pthread_cond_destroy(&h->done);
        pthread_mutex_destroy(&h->lock);
    }
    for (int s = 0; s < 2; s++) {
        for (size_t t = 0; t < HOMEMADE_MAX_THREADS; t++)
            free(h->list[s].buf[t].ids);
        free(h->list[s].off);
        free(h->list[s].len);
        free(h->list[s].owner);
    }
    free(h->x), free(h->y), free(h->z), free(h->r2), free(h->cell_of), free(h->start);
    free(h->fill), free(h->sx), free(h->sy), free(h->sz), free(h->sid);
    free(h);
}
