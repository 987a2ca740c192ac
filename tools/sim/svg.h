/*
 * svg.h - writes a snapshot of a percept-sim scene as a standalone SVG
 * picture: the map, every creature coloured by kind, the sense ranges and
 * perception links of the highlighted few, and a legend.
 */
#ifndef PERCEPT_SIM_SVG_H
#define PERCEPT_SIM_SVG_H

#include <stdio.h>

#include "scene.h"

/*
 * Writes the scene as it stands now to `out`, which the caller opened (and
 * checks for write errors and closes). Returns 0, or -1 if reading the
 * world failed (out of memory).
 */
int sim_svg_write(FILE *out, const sim_scene *scene);

#endif /* PERCEPT_SIM_SVG_H */
