/*
 * svg.h - writes a snapshot of a percept-sim scene as a standalone SVG
 * picture: the map, every creature coloured by kind, the sense ranges and
 * perception links of the highlighted few, and a legend.
 */
#ifndef PERCEPT_SIM_SVG_H
#define PERCEPT_SIM_SVG_H

#include <stddef.h>

#include "scene.h"

/*
 * Writes the scene as it stands now to `path`. Returns 0, or -1 with a
 * message naming the file in err.
 */
int sim_svg_write(const char *path, const sim_scene *scene, char *err, size_t errsize);

#endif /* PERCEPT_SIM_SVG_H */
