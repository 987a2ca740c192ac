/*
 * svg.c - the SVG snapshot of a scene. Plain SVG 1.1 with no script and no
 * external reference, so it shows the same in a browser, an image viewer
 * and a README. Numbers are printed with fixed precision: a seed gives the
 * same file byte for byte.
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The map is drawn MAP_PX pixels square at (MARGIN, MARGIN); the legend sits to its right. */
#define MAP_PX ((double)SIM_MAP_PX)
#define MARGIN 20.0
#define LEGEND_X (MARGIN + MAP_PX + 24.0)
#define WIDTH (LEGEND_X + 236.0)
#define HEIGHT (MAP_PX + 2 * MARGIN)

/* Ranges differ by dash as well as colour, for readers who cannot tell the colours apart. */
static const char *const sense_dash[SIM_SENSES] = {"", "6 4", "2 3"};

typedef struct svg {
    FILE *out;
    const sim_scene *scene;
    double scale; /* pixels per world unit */
} svg;

static double px(const svg *g, double world)
{
    return MARGIN + world * g->scale;
}

static double len(const svg *g, double world)
{
    return world * g->scale;
}

static void draw_map(svg *g)
{
    const sim_scene *s = g->scene;
    FILE *o = g->out;

    fprintf(o,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f3efe2\" "
            "stroke=\"#8a8170\"/>\n",
            MARGIN, MARGIN, MAP_PX, MAP_PX);
    fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#d5e8c4\"/>\n",
            px(g, s->forest_x), px(g, s->forest_y), len(g, s->forest_r));
    fprintf(o,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ecd9ad\" "
            "stroke=\"#b59a5a\" stroke-dasharray=\"5 3\"/>\n",
            px(g, s->market_x0), px(g, s->market_y0), len(g, s->market_x1 - s->market_x0),
            len(g, s->market_y1 - s->market_y0));
    /* The church: a cross. */
    fprintf(o, "<path stroke=\"#6b4f2a\" stroke-width=\"2.5\" d=\"M%.1f %.1fv16M%.1f %.1fh11\"/>\n",
            px(g, s->church_x), px(g, s->church_y) - 8, px(g, s->church_x) - 5.5,
            px(g, s->church_y) - 3);
}

/* A place name, drawn over the crowd with a light halo so that it stays readable. */
static void label(svg *g, const char *name, const char *color, double x, double y,
                  const char *anchor)
{
    fprintf(g->out,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" fill=\"%s\" stroke=\"#f3efe2\" "
            "stroke-width=\"3\" paint-order=\"stroke\" text-anchor=\"%s\">%s</text>\n",
            x, y, color, anchor, name);
}

static void draw_labels(svg *g)
{
    const sim_scene *s = g->scene;
    label(g, "forest", "#4f7a3a", px(g, s->forest_x), px(g, s->forest_y - s->forest_r) + 16,
          "middle");
    label(g, "market", "#8a6d2a", px(g, (s->market_x0 + s->market_x1) / 2),
          px(g, s->market_y1) + 15, "middle");
    label(g, "church", "#6b4f2a", px(g, s->church_x) + 9, px(g, s->church_y) + 5, "start");
}

/* Lines from each highlighted observer to what it perceives, one path per sense. */
static int draw_links(svg *g)
{
    const sim_scene *s = g->scene;
    percept_id *ids = NULL;
    size_t cap = 0;

    for (size_t h = 0; h < s->highlight_count; h++) {
        const sim_entity *o = &s->entities[s->highlights[h]];
        if (!o->present)
            continue;
        for (int k = 0; k < SIM_SENSES; k++) {
            size_t n = sim_perceived(s, s->highlights[h], (percept_sense)k, &ids, &cap);
            if (n == (size_t)-1) {
                free(ids);
                return -1;
            }
            if (n == 0)
                continue;
            fprintf(g->out,
                    "<path fill=\"none\" stroke=\"%s\" stroke-opacity=\"0.55\" "
                    "stroke-width=\"0.8\" d=\"",
                    sim_sense_colors[k]);
            for (size_t j = 0; j < n; j++) {
                const sim_entity *t = &s->entities[sim_index(s, ids[j])];
                fprintf(g->out, "M%.1f %.1fL%.1f %.1f", px(g, o->x), px(g, o->y), px(g, t->x),
                        px(g, t->y));
            }
            fputs("\"/>\n", g->out);
        }
    }
    free(ids);
    return 0;
}

/*
 * Dots are zero-length path segments with round caps, one path per kind:
 * a third of the bytes of <circle> elements, which keeps the picture small
 * enough for a README. Creatures hidden from sight are empty rings, the way
 * a game draws a sneaking thief.
 */
static void draw_entities(svg *g)
{
    const sim_scene *s = g->scene;

    for (int k = 0; k < KIND_COUNT; k++) {
        const char *color = sim_profiles[k].color;
        double r = sim_profiles[k].dot;
        int dots = 0, rings = 0;
        for (size_t i = 0; i < s->count; i++) {
            const sim_entity *e = &s->entities[i];
            if (e->kind != k || !e->present)
                continue;
            if (e->hidden & PERCEPT_SENSE_BIT(PERCEPT_SIGHT)) {
                rings++;
                continue;
            }
            if (dots++ == 0)
                fprintf(g->out,
                        "<path fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" "
                        "stroke-linecap=\"round\" d=\"",
                        color, 2 * r);
            fprintf(g->out, "M%.1f %.1fh0", px(g, e->x), px(g, e->y));
        }
        if (dots > 0)
            fputs("\"/>\n", g->out);
        if (rings == 0)
            continue;
        fprintf(g->out, "<g fill=\"none\" stroke=\"%s\" stroke-width=\"1\">\n", color);
        for (size_t i = 0; i < s->count; i++) {
            const sim_entity *e = &s->entities[i];
            if (e->kind == k && e->present && (e->hidden & PERCEPT_SENSE_BIT(PERCEPT_SIGHT)))
                fprintf(g->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", px(g, e->x),
                        px(g, e->y), r - 0.5);
        }
        fputs("</g>\n", g->out);
    }
}

/* The highlighted few: their ranges (a sector for a cone), a ring, and a label. */
static void draw_highlights(svg *g)
{
    const sim_scene *s = g->scene;

    for (size_t h = 0; h < s->highlight_count; h++) {
        size_t i = s->highlights[h];
        const sim_entity *e = &s->entities[i];
        if (!e->present)
            continue;
        for (int k = 0; k < SIM_SENSES; k++) {
            double a, half, r = len(g, sim_reach(s, i, (percept_sense)k, &a, &half));
            double x = px(g, e->x), y = px(g, e->y);
            if (r <= 0)
                continue;
            if (half > 0)
                fprintf(g->out, "<path d=\"M%.1f %.1fL%.1f %.1fA%.1f %.1f 0 %d 1 %.1f %.1fZ\"", x,
                        y, x + r * cos(a - half), y + r * sin(a - half), r, r, cos(half) < 0,
                        x + r * cos(a + half), y + r * sin(a + half));
            else
                fprintf(g->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x, y, r);
            fprintf(g->out,
                    " fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\" stroke-width=\"1.6\"%s%s%s/>\n",
                    sim_sense_colors[k], half > 0 ? "0.16" : "0.06", sim_sense_colors[k],
                    sense_dash[k][0] ? " stroke-dasharray=\"" : "", sense_dash[k],
                    sense_dash[k][0] ? "\"" : "");
        }
        fprintf(g->out,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\" stroke=\"#ffffff\" "
                "stroke-width=\"2\"/>\n",
                px(g, e->x), px(g, e->y), sim_profiles[e->kind].color);
        fprintf(g->out,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\" fill=\"#222\" "
                "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">%s %u</text>\n",
                px(g, e->x) + 9, px(g, e->y) - 8, sim_profiles[e->kind].name, (unsigned)sim_id(i));
    }
}

static void draw_legend(svg *g)
{
    const sim_scene *s = g->scene;
    FILE *o = g->out;
    double x = LEGEND_X, y = MARGIN + 18;

    fprintf(
        o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"18\" font-weight=\"bold\">percept-sim</text>\n",
        x, y);
    y += 22;
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">tick %d of %d</text>\n", x, y, s->tick,
            s->ticks);
    y += 18;
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#555\">%s</text>\n", x, y,
            sim_phase_text(s->phase));
    y += 30;
    fprintf(o,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">creatures</text>\n",
            x, y);
    y += 6;
    for (int k = 0; k < KIND_COUNT; k++) {
        const sim_profile *p = &sim_profiles[k];
        char senses[96];
        sim_profile_text(p, senses, sizeof senses);
        y += 20;
        int hidden = p->hidden != 0;
        fprintf(o,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"%s\" "
                "stroke-width=\"1.5\"/>\n",
                x + 6, y - 4, hidden ? "none" : p->color, p->color);
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%zu %s%s</text>\n", x + 18, y,
                s->kind_count[k], p->plural, hidden ? " (hidden from sight)" : "");
        y += 14;
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#666\">%s</text>\n", x + 18,
                y, senses);
    }
    y += 30;
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">senses</text>\n",
            x, y);
    y += 6;
    for (int k = 0; k < SIM_SENSES; k++) {
        y += 20;
        fprintf(o,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2.5\"%s%s%s/>\n",
                x, y - 4, x + 26, y - 4, sim_sense_colors[k],
                sense_dash[k][0] ? " stroke-dasharray=\"" : "", sense_dash[k],
                sense_dash[k][0] ? "\"" : "");
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", x + 34, y,
                sim_sense_names[k]);
    }
    y += 30;
    static const char *const note[] = {
        "Circles and cones: how far one creature",
        "of each kind reaches on the ground.",
        "Lines: what it perceives now, coloured",
        "by sense. Guards overlook guards, wolves",
        "their own scent. Rings are thieves",
        "hidden from sight; at dusk all sight",
        "but the owls' shrinks.",
    };
    for (size_t i = 0; i < sizeof note / sizeof note[0]; i++, y += 15)
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#444\">%s</text>\n", x, y,
                note[i]);
}

int sim_svg_write(FILE *out, const sim_scene *scene)
{
    svg g;
    g.scene = scene;
    g.scale = MAP_PX / scene->size;
    g.out = out;
    fprintf(g.out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, "
            "sans-serif\">\n"
            "<title>percept-sim: %zu creatures perceiving each other, tick %d</title>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            WIDTH, HEIGHT, WIDTH, HEIGHT, scene->count, scene->tick);
    draw_map(&g);
    int st = draw_links(&g);
    draw_entities(&g);
    draw_labels(&g);
    draw_highlights(&g);
    draw_legend(&g);
    fputs("</svg>\n", g.out);
    return st < 0 ? -1 : 0;
}
