/*
 * html.h - writes a self-contained HTML page that animates a percept-sim
 * run: the frames are streamed into the page as data while the run goes,
 * and a small inline script draws them on a canvas. No network is needed.
 */
#ifndef PERCEPT_SIM_HTML_H
#define PERCEPT_SIM_HTML_H

#include <stdio.h>

#include "scene.h"

typedef struct sim_html {
    FILE *out;       /* opened, checked for write errors and closed by the caller */
    size_t frames;   /* written so far */
    size_t noises;   /* the scene's noises written so far */
    percept_id *ids; /* scratch for reading perceived sets */
    size_t cap;
} sim_html;

/* Starts the page on `out` with the scene's map and creatures. */
void sim_html_start(sim_html *h, FILE *out, const sim_scene *scene);

/* Appends the scene as it stands now as the next frame. 0, or -1 if reading the world failed. */
int sim_html_frame(sim_html *h, const sim_scene *scene);

/*
 * Ends the page: `changes` holds, for each tick 1..ticks, the enter and leave
 * events per sense (ticks * SIM_SENSES values), drawn as a chart;
 * `summary` is the run's text summary, shown below the map.
 */
void sim_html_finish(sim_html *h, const unsigned long *changes, int ticks, const char *summary);

/* Frees h's memory (not the stream), whether or not the page was finished. */
void sim_html_free(sim_html *h);

#endif /* PERCEPT_SIM_HTML_H */
