/*
 * chart.c - the report's scaling chart: time per move against N at constant
 * density, log-log, as plain SVG text, so that the report shows it without
 * any plotting tool. Solid lines: one call per move; dashed: tick by tick on
 * the first thread count.
 */
#include <math.h>
#include <stdio.h>

#include "report.h"

#define WIDTH 720
#define HEIGHT 420
#define LEFT 78   /* room for the y labels */
#define RIGHT 170 /* room for the legend */
#define TOP 42    /* room for the title */
#define BOTTOM 58 /* room for the x labels */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

typedef struct axis {
    double lo, hi; /* log10 of the ends: whole decades */
    double p_lo, p_hi;
} axis;

static double place(const axis *a, double v)
{
    return a->p_lo + (log10(v) - a->lo) / (a->hi - a->lo) * (a->p_hi - a->p_lo);
}

/* The modes drawn: one call per move, and tick by tick on the first thread count. */
#define CHART_MODES 2

/* Contender b's time per move in `mode` in case i of the sweep; NAN if none. */
static double point(const bench_report *r, size_t i, size_t b, int mode)
{
    const case_result *c = &r->cases[i];
    const backend_figures *f = &c->fig[mode][b];
    int in = c->plan.in_sweep && mode < case_modes(&c->plan) && b < c->contender_count && f->ran &&
             !f->failed;
    return in && f->ns[OP_MOVE] > 0 ? f->ns[OP_MOVE] : NAN;
}

/* A line and a label at each decade: 1k, 10k, ... or 100 ns, 1 µs, ... */
static void draw_axis(FILE *f, const axis *a, int vertical)
{
    static const char *const units[2][4] = {{"", "k", "M", "G"},
                                            {" ns", " \xc2\xb5s", " ms", " s"}};
    for (int d = (int)a->lo; d <= (int)a->hi && d >= 0 && d < 12; d++) {
        double p = place(a, pow(10.0, d));
        const char *unit = units[vertical][d / 3];
        int value = d % 3 == 0 ? 1 : d % 3 == 1 ? 10 : 100;
        if (vertical)
            fprintf(f,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#bbbbbb\"/>\n"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%s</text>\n",
                    LEFT, p, WIDTH - RIGHT, p, LEFT - 6, p + 4, value, unit);
        else
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#bbbbbb\"/>\n"
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d%s</text>\n",
                    p, TOP, p, HEIGHT - BOTTOM, p, HEIGHT - BOTTOM + 16, value, unit);
    }
}

int report_write_chart(const char *path, const bench_report *r)
{
    size_t backends = r->count ? r->cases[0].contender_count : 0;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0}; /* N, then time */
    for (size_t i = 0; i < r->count; i++)
        for (size_t b = 0; b < backends; b++)
            for (int mode = 0; mode < CHART_MODES; mode++) {
                double x = (double)r->cases[i].plan.n, y = point(r, i, b, mode);
                if (!isnan(y))
                    lo[0] = fmin(lo[0], x), hi[0] = fmax(hi[0], x), lo[1] = fmin(lo[1], y),
                    hi[1] = fmax(hi[1], y);
            }
    axis ax = {floor(log10(lo[0])), ceil(log10(hi[0])), LEFT, WIDTH - RIGHT};
    axis ay = {floor(log10(lo[1])), ceil(log10(hi[1])), HEIGHT - BOTTOM, TOP};
    ax.hi += ax.hi <= ax.lo;
    ay.hi += ay.hi <= ay.lo;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 "
            "%d %d\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"%d\" "
            "height=\"%d\" fill=\"white\"/>\n<text x=\"%d\" y=\"24\" text-anchor=\"middle\" "
            "font-size=\"15\" font-weight=\"bold\">uniform_walk at constant density: time per "
            "move</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333333\"/>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">entities "
            "(N)</text>\n<text transform=\"translate(18 %d) rotate(-90)\" "
            "text-anchor=\"middle\">time per move</text>\n",
            WIDTH, HEIGHT, WIDTH, HEIGHT, WIDTH, HEIGHT, (LEFT + WIDTH - RIGHT) / 2, LEFT, TOP,
            WIDTH - RIGHT - LEFT, HEIGHT - BOTTOM - TOP, (LEFT + WIDTH - RIGHT) / 2, HEIGHT - 16,
            (TOP + HEIGHT - BOTTOM) / 2);
    if (hi[0] > 0) {
        draw_axis(f, &ax, 0);
        draw_axis(f, &ay, 1);
    }
    for (size_t b = 0, legend = 0; b < backends && hi[0] > 0; b++)
        for (int mode = 0; mode < CHART_MODES; mode++) {
            const char *colour = palette[b % (sizeof palette / sizeof palette[0])];
            const char *dash = mode ? " stroke-dasharray=\"7 4\"" : "";
            int points = 0;
            for (size_t i = 0; i < r->count; i++) {
                double y = point(r, i, b, mode), x = (double)r->cases[i].plan.n;
                if (isnan(y))
                    continue;
                if (points++ == 0)
                    fprintf(f,
                            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                            colour, dash);
                fprintf(f, "%s%.1f,%.1f", points > 1 ? " " : "", place(&ax, x), place(&ay, y));
            }
            if (points == 0)
                continue;
            fputs("\"/>\n", f);
            for (size_t i = 0; i < r->count; i++)
                if (!isnan(point(r, i, b, mode)))
                    fprintf(
                        f,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\"/>\n",
                        place(&ax, (double)r->cases[i].plan.n), place(&ay, point(r, i, b, mode)),
                        mode ? "white" : colour, colour);
            int ly = TOP + 14 + 20 * (int)legend++;
            fprintf(f,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                    "stroke-width=\"3\"%s/>\n<text x=\"%d\" y=\"%d\">%s%s</text>\n",
                    WIDTH - RIGHT + 14, ly - 4, WIDTH - RIGHT + 38, ly - 4, colour, dash,
                    WIDTH - RIGHT + 44, ly, r->cases[0].contenders[b], mode ? ", ticks" : "");
        }
    fputs("</svg>\n", f);
    int bad = ferror(f);
    return fclose(f) == 0 && !bad ? 0 : -1;
}
