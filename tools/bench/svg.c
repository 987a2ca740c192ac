/*
 * svg.c - log-log line charts as plain SVG text, so the report shows its
 * figures at a glance without any plotting tool.
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define WIDTH 720
#define HEIGHT 420
#define LEFT 78   /* room for the y labels */
#define RIGHT 170 /* room for the legend */
#define TOP 42    /* room for the title */
#define BOTTOM 58 /* room for the x labels */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
#define PALETTE_SIZE (sizeof palette / sizeof palette[0])

/* Writes text with the characters XML reserves escaped. */
static void put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static void format_value(char *buf, size_t size, double v, svg_format fmt)
{
    if (fmt == SVG_COUNT) {
        if (v >= 1e6)
            snprintf(buf, size, "%gM", v / 1e6);
        else if (v >= 1e3)
            snprintf(buf, size, "%gk", v / 1e3);
        else
            snprintf(buf, size, "%g", v);
    } else if (fmt == SVG_NS) {
        if (v >= 1e9)
            snprintf(buf, size, "%g s", v / 1e9);
        else if (v >= 1e6)
            snprintf(buf, size, "%g ms", v / 1e6);
        else if (v >= 1e3)
            snprintf(buf, size, "%g \xc2\xb5s", v / 1e3);
        else
            snprintf(buf, size, "%g ns", v);
    } else {
        snprintf(buf, size, "%g", v);
    }
}

typedef struct axis {
    double lo, hi; /* log10 of the ends */
    int pixel_lo, pixel_hi;
} axis;

static double place(const axis *a, double v)
{
    return a->pixel_lo + (log10(v) - a->lo) / (a->hi - a->lo) * (a->pixel_hi - a->pixel_lo);
}

/* The decades that hold every value of the series on one axis (and `extra`, if > 0). */
static int fit_axis(axis *a, const svg_series *s, size_t count, int use_y, double extra)
{
    double lo = INFINITY, hi = -INFINITY;
    if (extra > 0 && isfinite(extra))
        lo = hi = extra;
    for (size_t i = 0; i < count; i++) {
        for (size_t k = 0; k < s[i].n; k++) {
            double v = use_y ? s[i].y[k] : s[i].x[k];
            double other = use_y ? s[i].x[k] : s[i].y[k];
            if (!(v > 0) || !(other > 0) || !isfinite(v))
                continue;
            if (v < lo)
                lo = v;
            if (v > hi)
                hi = v;
        }
    }
    if (!(lo <= hi))
        return -1;
    a->lo = floor(log10(lo));
    a->hi = ceil(log10(hi));
    if (a->hi <= a->lo)
        a->hi = a->lo + 1;
    return 0;
}

static void draw_axis(FILE *f, const axis *a, int vertical, svg_format fmt)
{
    int span = (int)(a->hi - a->lo);
    for (int d = (int)a->lo; d <= (int)a->hi; d++) {
        for (int m = 1; m <= 9; m++) {
            double v = (double)m * pow(10.0, d);
            if (log10(v) > a->hi + 1e-9)
                break;
            double p = place(a, v);
            int major = m == 1, labelled = major || (span <= 2 && (m == 2 || m == 5));
            const char *stroke = major ? "#bbbbbb" : "#eeeeee";
            if (vertical)
                fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                        LEFT, p, WIDTH - RIGHT, p, stroke);
            else
                fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", p,
                        TOP, p, HEIGHT - BOTTOM, stroke);
            if (!labelled)
                continue;
            char label[32];
            format_value(label, sizeof label, v, fmt);
            if (vertical)
                fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 6, p + 4);
            else
                fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", p,
                        HEIGHT - BOTTOM + 16);
            put_text(f, label);
            fputs("</text>\n", f);
        }
    }
}

int svg_write_chart(const char *path, const svg_chart *c, const svg_series *s, size_t count)
{
    axis ax = {0, 1, LEFT, WIDTH - RIGHT}, ay = {0, 1, HEIGHT - BOTTOM, TOP};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int empty = count == 0 || fit_axis(&ax, s, count, 0, 0) || fit_axis(&ay, s, count, 1, c->ref_y);

    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            WIDTH, HEIGHT, WIDTH, HEIGHT);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT);
    fprintf(f,
            "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
            "font-weight=\"bold\">",
            (LEFT + WIDTH - RIGHT) / 2);
    put_text(f, c->title);
    fputs("</text>\n", f);
    if (!empty) {
        draw_axis(f, &ax, 0, c->x_format);
        draw_axis(f, &ay, 1, c->y_format);
    } else {
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n",
                (LEFT + WIDTH - RIGHT) / 2, HEIGHT / 2);
    }
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333333\"/>\n",
            LEFT, TOP, WIDTH - RIGHT - LEFT, HEIGHT - BOTTOM - TOP);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (LEFT + WIDTH - RIGHT) / 2,
            HEIGHT - 16);
    put_text(f, c->x_label);
    fputs("</text>\n", f);
    fprintf(f, "<text transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\">",
            (TOP + HEIGHT - BOTTOM) / 2);
    put_text(f, c->y_label);
    fputs("</text>\n", f);

    if (!empty && c->ref_y > 0 && isfinite(c->ref_y)) {
        double p = place(&ay, c->ref_y);
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333333\" "
                "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
                LEFT, p, WIDTH - RIGHT, p);
        if (c->ref_label) {
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333333\">",
                    WIDTH - RIGHT - 6, p - 5);
            put_text(f, c->ref_label);
            fputs("</text>\n", f);
        }
    }
    for (size_t i = 0; i < count && !empty; i++) {
        const char *colour = palette[(size_t)s[i].colour % PALETTE_SIZE];
        const char *dash = s[i].dashed ? " stroke-dasharray=\"7 4\"" : "";
        int open = 0;
        for (size_t k = 0; k < s[i].n; k++) {
            if (!(s[i].x[k] > 0) || !(s[i].y[k] > 0) || !isfinite(s[i].y[k])) {
                if (open)
                    fputs("\"/>\n", f);
                open = 0;
                continue;
            }
            if (!open)
                fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                        colour, dash);
            fprintf(f, "%s%.1f,%.1f", open ? " " : "", place(&ax, s[i].x[k]),
                    place(&ay, s[i].y[k]));
            open = 1;
        }
        if (open)
            fputs("\"/>\n", f);
        for (size_t k = 0; k < s[i].n; k++)
            if (s[i].x[k] > 0 && s[i].y[k] > 0 && isfinite(s[i].y[k]))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" %s=\"%s\"%s/>\n",
                        place(&ax, s[i].x[k]), place(&ay, s[i].y[k]),
                        s[i].dashed ? "stroke" : "fill", colour,
                        s[i].dashed ? " fill=\"white\" stroke-width=\"1.5\"" : "");
        int ly = TOP + 14 + 20 * (int)i;
        fprintf(f,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                "stroke-width=\"3\"%s/>\n",
                WIDTH - RIGHT + 14, ly - 4, WIDTH - RIGHT + 38, ly - 4, colour,
                s[i].dashed ? " stroke-dasharray=\"5 3\"" : "");
        fprintf(f, "<text x=\"%d\" y=\"%d\">", WIDTH - RIGHT + 44, ly);
        put_text(f, s[i].name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    int bad = ferror(f);
    return fclose(f) == 0 && !bad ? 0 : -1;
}
