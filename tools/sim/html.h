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
    FILE *out;
    const char *path;
    size_t frames;   /* written so far */
    percept_id *ids; /* scratch for reading perceived sets */
    size_t cap;
} sim_html;

/* Starts the page at `path` with the scene's map and creatures. 0, or -1 with err. */
int sim_html_open(sim_html *h, const char *path, const sim_scene *scene, char *err, size_t errsize);

/* Appends the scene as it stands now as the next frame. 0, or -1 with err. */
int sim_html_frame(sim_html *h, const sim_scene *scene, char *err, size_t errsize);

/*
 * Ends the page: `changes` holds, for each tick 1..ticks, the enter and leave
 * events per sense (ticks * PERCEPT_SENSE_COUNT values), drawn as a chart;
 * `summary` is the run's text summary, shown below the map. Frees h's memory
 * whether or not it succeeds. 0, or -1 with err.
 */
int sim_html_close(sim_html *h, const unsigned long *changes, int ticks, const char *summary,
                   char *err, size_t errsize);

/* Gives up on the page (after an error elsewhere): closes the file, frees memory. */
void sim_html_abort(sim_html *h);

#endif /* PERCEPT_SIM_HTML_H */
