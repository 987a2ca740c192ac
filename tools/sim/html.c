/*
 * html.c - the animated page of a run. The page is one file: markup, style,
 * the run as a JavaScript object literal (frames of positions, hidden flags,
 * ranges, facings and perception links of the highlighted creatures, and
 * the noises since the frame before), and a script
 * that plays the frames on a canvas with a slider, a play button and a chart
 * of the changes per tick. It loads nothing from anywhere.
 */
#include "html.h"

#include <stdlib.h>
#include <string.h>

static const char page_head[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<title>percept-sim</title>\n"
    "<style>\n"
    "body { font-family: \"DejaVu Sans\", Helvetica, Arial, sans-serif; margin: 16px;\n"
    "       color: #222; background: #fafaf7; }\n"
    "h1 { font-size: 20px; margin: 0 0 4px; }\n"
    ".sub { color: #555; font-size: 13px; margin-bottom: 12px; }\n"
    ".row { display: flex; gap: 20px; align-items: flex-start; }\n"
    "#map { border: 1px solid #8a8170; background: #f3efe2; }\n"
    ".side { width: 330px; font-size: 13px; }\n"
    "#tick { font-size: 22px; font-weight: bold; }\n"
    "#phase { color: #555; margin-bottom: 8px; }\n"
    "#now { color: #333; margin: 6px 0 10px; }\n"
    "button { font-size: 14px; padding: 3px 12px; }\n"
    "input[type=range] { width: 220px; vertical-align: middle; }\n"
    "h2 { font-size: 14px; margin: 14px 0 4px; }\n"
    ".kind, .sense { margin: 3px 0; }\n"
    ".sw { display: inline-block; width: 11px; height: 11px; border-radius: 6px;\n"
    "      margin-right: 6px; border: 2px solid; vertical-align: -2px; }\n"
    ".ln { display: inline-block; width: 26px; height: 0; margin-right: 8px;\n"
    "      border-top: 3px solid; vertical-align: 3px; }\n"
    ".ranges { color: #666; font-size: 11px; margin-left: 21px; }\n"
    "#chart { border: 1px solid #ccc; background: #fff; }\n"
    "pre { font-size: 12px; background: #fff; border: 1px solid #ddd; padding: 8px;\n"
    "      overflow-x: auto; }\n"
    "</style>\n"
    "</head>\n"
    "<body>\n"
    "<h1>percept-sim</h1>\n"
    "<div class=\"sub\" id=\"sub\"></div>\n"
    "<div class=\"row\">\n";

/* Then the map's canvas, SIM_MAP_PX pixels square, and the rest of the page's markup. */
static const char page_side[] =
    "<div class=\"side\">\n"
    "<div id=\"tick\">tick</div>\n"
    "<div id=\"phase\"></div>\n"
    "<div><button id=\"play\">pause</button> <input id=\"frame\" type=\"range\" min=\"0\" "
    "value=\"0\"></div>\n"
    "<div id=\"now\"></div>\n"
    "<h2>changes of the relation per tick</h2>\n"
    "<canvas id=\"chart\" width=\"320\" height=\"110\"></canvas>\n"
    "<h2>creatures</h2>\n"
    "<div id=\"kinds\"></div>\n"
    "<h2>senses</h2>\n"
    "<div id=\"senses\"></div>\n"
    "<p>Circles and cones: how far one creature of each kind reaches on the\n"
    "ground. Lines: what it perceives now, coloured by sense. Guards overlook\n"
    "guards, wolves their own scent. Rings are thieves hidden from sight; waves\n"
    "are a wolf's howl and the church bell. At dusk, late in the flight, sight\n"
    "shrinks for all but the owls.</p>\n"
    "</div>\n"
    "</div>\n"
    "<h2>summary</h2>\n"
    "<pre id=\"summary\"></pre>\n";

/* The player: everything it needs is in SIM. */
static const char page_script[] =
    "<script>\n"
    "(function () {\n"
    "  \"use strict\";\n"
    "  var S = SIM, map = document.getElementById(\"map\"), g = map.getContext(\"2d\");\n"
    "  var chart = document.getElementById(\"chart\"), cg = chart.getContext(\"2d\");\n"
    "  var slider = document.getElementById(\"frame\"), button = "
    "document.getElementById(\"play\");\n"
    "  var scale = map.width / S.size, cur = 0, playing = S.frames.length > 1, maxChange = 1;\n"
    "  var DASH = [[], [6, 4], [2, 3]], TAU = 2 * Math.PI;\n"
    "  function X(v) { return v * scale; }\n"
    "  function el(tag, cls, html) {\n"
    "    var e = document.createElement(tag); e.className = cls; e.innerHTML = html; return e;\n"
    "  }\n"
    "  function text(id, s) { document.getElementById(id).textContent = s; }\n"
    "  function drawMap() {\n"
    "    var m = S.market, f = S.forest;\n"
    "    g.fillStyle = \"#f3efe2\"; g.fillRect(0, 0, map.width, map.height);\n"
    "    g.fillStyle = \"#d5e8c4\"; g.beginPath(); g.arc(X(f[0]), X(f[1]), X(f[2]), 0, TAU);\n"
    "    g.fill();\n"
    "    g.fillStyle = \"#ecd9ad\"; g.fillRect(X(m[0]), X(m[1]), X(m[2] - m[0]), X(m[3] - m[1]));\n"
    "    g.strokeStyle = \"#b59a5a\"; g.lineWidth = 1; g.setLineDash([5, 3]);\n"
    "    g.strokeRect(X(m[0]), X(m[1]), X(m[2] - m[0]), X(m[3] - m[1])); g.setLineDash([]);\n"
    "    var c = S.church;\n"
    "    g.strokeStyle = \"#6b4f2a\"; g.lineWidth = 2.5; g.beginPath();\n"
    "    g.moveTo(X(c[0]), X(c[1]) - 8); g.lineTo(X(c[0]), X(c[1]) + 8);\n"
    "    g.moveTo(X(c[0]) - 5.5, X(c[1]) - 3); g.lineTo(X(c[0]) + 5.5, X(c[1]) - 3); g.stroke();\n"
    "  }\n"
    "  function label(s, x, y, color) {\n"
    "    g.lineWidth = 3; g.strokeStyle = \"#f3efe2\"; g.strokeText(s, x, y);\n"
    "    g.fillStyle = color; g.fillText(s, x, y);\n"
    "  }\n"
    "  function drawLabels() {\n"
    "    var m = S.market, f = S.forest;\n"
    "    g.font = \"13px sans-serif\"; g.textAlign = \"center\";\n"
    "    label(\"forest\", X(f[0]), X(f[1] - f[2]) + 16, \"#4f7a3a\");\n"
    "    label(\"market\", X((m[0] + m[2]) / 2), X(m[3]) + 15, \"#8a6d2a\");\n"
    "    g.textAlign = \"start\";\n"
    "    label(\"church\", X(S.church[0]) + 9, X(S.church[1]) + 5, \"#6b4f2a\");\n"
    "  }\n"
    "  function draw(n) {\n"
    "    var fr = S.frames[n], p = fr.p, hidden = {}, i, j, k;\n"
    "    drawMap();\n"
    "    g.lineWidth = 0.8; g.globalAlpha = 0.55;\n"
    "    fr.l.forEach(function (l) {\n"
    "      var o = S.hl[l[0]];\n"
    "      g.strokeStyle = S.senses[l[1]][1]; g.beginPath();\n"
    "      for (var j = 2; j < l.length; j++) {\n"
    "        g.moveTo(X(p[2 * o]), X(p[2 * o + 1])); g.lineTo(X(p[2 * l[j]]), X(p[2 * l[j] + "
    "1]));\n"
    "      }\n"
    "      g.stroke();\n"
    "    });\n"
    "    g.globalAlpha = 1;\n"
    "    fr.h.forEach(function (i) { hidden[i] = 1; });\n"
    "    for (k = 0; k < S.kinds.length; k++) {\n"
    "      var kind = S.kinds[k], r = kind[3] - 0.5, fill = new Path2D(), ring = new Path2D();\n"
    "      for (i = 0; i < S.kind.length; i++) {\n"
    "        if (S.kind[i] !== k || p[2 * i] < 0) continue;\n"
    "        var path = hidden[i] ? ring : fill;\n"
    "        path.moveTo(X(p[2 * i]) + r, X(p[2 * i + 1]));\n"
    "        path.arc(X(p[2 * i]), X(p[2 * i + 1]), r, 0, TAU);\n"
    "      }\n"
    "      g.fillStyle = kind[2]; g.strokeStyle = kind[2]; g.lineWidth = 1;\n"
    "      g.fill(fill); g.stroke(fill); g.stroke(ring);\n"
    "    }\n"
    "    drawLabels();\n"
    "    g.strokeStyle = S.senses[1][1]; g.lineWidth = 1.5;\n"
    "    fr.s.forEach(function (n) {\n"
    "      for (k = 1; k <= 3; k++) {\n"
    "        g.beginPath(); g.arc(X(n[0]), X(n[1]), (n[2] ? 14 : 8) * k, 0, TAU); g.stroke();\n"
    "      }\n"
    "    });\n"
    "    for (j = 0; j < S.hl.length; j++) {\n"
    "      i = S.hl[j];\n"
    "      if (p[2 * i] < 0) continue;\n"
    "      var x = X(p[2 * i]), y = X(p[2 * i + 1]);\n"
    "      for (k = 0; k < 3; k++) {\n"
    "        var rr = X(fr.r[j][k]), a = fr.r[j][3], h = S.kinds[S.kind[i]][7][k] * Math.PI / "
    "360;\n"
    "        if (rr <= 0) continue;\n"
    "        g.beginPath();\n"
    "        if (h > 0) { g.moveTo(x, y); g.arc(x, y, rr, a - h, a + h); g.closePath(); }\n"
    "        else g.arc(x, y, rr, 0, TAU);\n"
    "        g.globalAlpha = h > 0 ? 0.16 : 0.06; g.fillStyle = S.senses[k][1]; g.fill();\n"
    "        g.globalAlpha = 1;\n"
    "        g.setLineDash(DASH[k]); g.lineWidth = 1.6; g.strokeStyle = S.senses[k][1]; "
    "g.stroke();\n"
    "        g.setLineDash([]);\n"
    "      }\n"
    "      g.beginPath(); g.arc(x, y, 6, 0, TAU); g.fillStyle = S.kinds[S.kind[i]][2]; g.fill();\n"
    "      g.lineWidth = 2; g.strokeStyle = \"#fff\"; g.stroke();\n"
    "      g.font = \"bold 12px sans-serif\"; g.lineWidth = 3;\n"
    "      var label = S.kinds[S.kind[i]][0] + \" \" + (i + 1);\n"
    "      g.strokeText(label, x + 9, y - 8); g.fillStyle = \"#222\"; g.fillText(label, x + 9, y - "
    "8);\n"
    "    }\n"
    "    text(\"tick\", \"tick \" + fr.t + \" of \" + S.ticks);\n"
    "    text(\"phase\", S.phases[fr.ph]);\n"
    "    var c = S.changes[fr.t - 1] || [0, 0, 0];\n"
    "    text(\"now\", \"this tick: \" + c[0] + \" sight, \" + c[1] + \" hearing, \" + c[2] +\n"
    "         \" smell enter/leave events\");\n"
    "    document.title = \"percept-sim: tick \" + fr.t;\n"
    "    slider.value = n;\n"
    "    drawChart(fr.t);\n"
    "  }\n"
    "  function drawChart(t) {\n"
    "    var w = chart.width, h = chart.height, n = S.changes.length, i, k;\n"
    "    cg.clearRect(0, 0, w, h);\n"
    "    var from = 0, shade = [\"#f6f3ea\", \"#f3e6c6\", \"#f1dcd8\"];\n"
    "    function at(t) { return n > 1 ? (t - 1) * (w - 4) / (n - 1) + 2 : w / 2; }\n"
    "    cg.font = \"10px sans-serif\";\n"
    "    for (k = 0; k < 3; k++) {\n"
    "      var x0 = from > 0 ? at(from + 0.5) : 0, x1 = k < 2 ? at(S.phase_end[k] + 0.5) : w;\n"
    "      cg.fillStyle = shade[k]; cg.fillRect(x0, 0, x1 - x0, h);\n"
    "      cg.fillStyle = \"#777\"; cg.fillText(S.phases[k], x0 + 3, 11);\n"
    "      from = S.phase_end[k];\n"
    "    }\n"
    "    for (k = 0; k < 3; k++) {\n"
    "      cg.strokeStyle = S.senses[k][1]; cg.lineWidth = 1.5; cg.beginPath();\n"
    "      for (i = 0; i < n; i++) {\n"
    "        var y = h - 4 - S.changes[i][k] * (h - 18) / maxChange;\n"
    "        if (i === 0) cg.moveTo(at(i + 1), y); else cg.lineTo(at(i + 1), y);\n"
    "      }\n"
    "      cg.stroke();\n"
    "    }\n"
    "    cg.strokeStyle = \"#222\"; cg.lineWidth = 1; cg.beginPath();\n"
    "    cg.moveTo(at(t), 0); cg.lineTo(at(t), h); cg.stroke();\n"
    "  }\n"
    "  S.changes.forEach(function (c) { maxChange = Math.max(maxChange, c[0], c[1], c[2]); });\n"
    "  text(\"sub\", S.entities + \" creatures, \" + S.ticks + \" ticks, seed \" + S.seed +\n"
    "       \": who perceives whom, by sight, hearing and smell\");\n"
    "  text(\"summary\", S.summary);\n"
    "  S.kinds.forEach(function (k) {\n"
    "    var d = el(\"div\", \"kind\", \"\");\n"
    "    var sw = el(\"span\", \"sw\", \"\");\n"
    "    sw.style.borderColor = k[2]; sw.style.background = k[5] ? \"transparent\" : k[2];\n"
    "    d.appendChild(sw);\n"
    "    d.appendChild(document.createTextNode(k[4] + \" \" + k[1] +\n"
    "        (k[5] ? \" (hidden from sight)\" : \"\")));\n"
    "    var rg = el(\"div\", \"ranges\", \"\");\n"
    "    rg.textContent = k[6];\n"
    "    d.appendChild(rg);\n"
    "    document.getElementById(\"kinds\").appendChild(d);\n"
    "  });\n"
    "  S.senses.forEach(function (s, i) {\n"
    "    var d = el(\"div\", \"sense\", \"\"), ln = el(\"span\", \"ln\", \"\");\n"
    "    ln.style.borderTopColor = s[1];\n"
    "    ln.style.borderTopStyle = i === 0 ? \"solid\" : i === 1 ? \"dashed\" : \"dotted\";\n"
    "    d.appendChild(ln); d.appendChild(document.createTextNode(s[0]));\n"
    "    document.getElementById(\"senses\").appendChild(d);\n"
    "  });\n"
    "  slider.max = S.frames.length - 1;\n"
    "  slider.addEventListener(\"input\", function () {\n"
    "    playing = false; button.textContent = \"play\"; cur = +slider.value; draw(cur);\n"
    "  });\n"
    "  button.addEventListener(\"click\", function () {\n"
    "    playing = !playing; button.textContent = playing ? \"pause\" : \"play\";\n"
    "  });\n"
    "  button.textContent = playing ? \"pause\" : \"play\";\n"
    "  draw(0);\n"
    "  setInterval(function () {\n"
    "    if (!playing) return;\n"
    "    cur = (cur + 1) % S.frames.length; draw(cur);\n"
    "  }, 150);\n"
    "})();\n"
    "</script>\n"
    "</body>\n"
    "</html>\n";

/* A JavaScript string literal, safe inside a <script> element. */
static void put_string(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", o);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

void sim_html_start(sim_html *h, FILE *out, const sim_scene *s)
{
    memset(h, 0, sizeof *h);
    h->out = out;
    FILE *o = h->out;
    fputs(page_head, o);
    /* The canvas is as large as the SVG's map. */
    fprintf(o, "<canvas id=\"map\" width=\"%d\" height=\"%d\"></canvas>\n", SIM_MAP_PX, SIM_MAP_PX);
    fputs(page_side, o);
    fputs("<script>\nvar SIM = {\n", o);
    fprintf(o, "\"size\": %.0f, \"ticks\": %d, \"entities\": %zu, \"seed\": \"%llu\",\n", s->size,
            s->ticks, s->count, (unsigned long long)s->seed);
    fprintf(o, "\"market\": [%.0f, %.0f, %.0f, %.0f], \"forest\": [%.0f, %.0f, %.0f],\n",
            s->market_x0, s->market_y0, s->market_x1, s->market_y1, s->forest_x, s->forest_y,
            s->forest_r);
    fprintf(o, "\"church\": [%.0f, %.0f],\n", s->church_x, s->church_y);
    fprintf(o, "\"phase_end\": [%d, %d, %d],\n", sim_phase_end(s->ticks, PHASE_WANDER),
            sim_phase_end(s->ticks, PHASE_MARKET), s->ticks);
    fputs("\"phases\": [", o);
    for (int p = 0; p < PHASE_COUNT; p++) {
        put_string(o, sim_phase_text((sim_phase)p));
        fputs(p + 1 < PHASE_COUNT ? ", " : "],\n", o);
    }
    /* [name, plural, colour, radius, count, hidden from sight, senses, [cones]] */
    fputs("\"kinds\": [\n", o);
    for (int k = 0; k < KIND_COUNT; k++) {
        const sim_profile *p = &sim_profiles[k];
        char senses[96];
        sim_profile_text(p, senses, sizeof senses);
        fprintf(o, "  [\"%s\", \"%s\", \"%s\", %.1f, %zu, %d, ", p->name, p->plural, p->color,
                p->dot, s->kind_count[k], p->hidden != 0);
        put_string(o, senses);
        fprintf(o, ", [%g, %g, %g]]%s\n", p->fov[0], p->fov[1], p->fov[2],
                k + 1 < KIND_COUNT ? "," : "");
    }
    fputs("],\n\"senses\": [", o);
    for (int k = 0; k < SIM_SENSES; k++)
        fprintf(o, "[\"%s\", \"%s\"]%s", sim_sense_names[k], sim_sense_colors[k],
                k + 1 < SIM_SENSES ? ", " : "],\n");
    fputs("\"hl\": [", o);
    for (size_t i = 0; i < s->highlight_count; i++)
        fprintf(o, "%s%zu", i ? ", " : "", s->highlights[i]);
    fputs("],\n\"kind\": [", o);
    for (size_t i = 0; i < s->count; i++)
        fprintf(o, "%s%u", i == 0 ? "" : i % 40 == 0 ? ",\n" : ",", (unsigned)s->entities[i].kind);
    fputs("],\n\"frames\": [\n", o);
}

int sim_html_frame(sim_html *h, const sim_scene *s)
{
    FILE *o = h->out;

    /* p: positions (-1 while logged out); h: hidden from sight; r: reach per sense and
     * facing; l: links; s: noises. */
    fprintf(o, "%s{\"t\": %d, \"ph\": %d, \"p\": [", h->frames ? ",\n" : "", s->tick,
            (int)s->phase);
    for (size_t i = 0; i < s->count; i++) {
        const sim_entity *e = &s->entities[i];
        if (e->present)
            fprintf(o, "%s%.0f,%.0f", i ? "," : "", e->x, e->y);
        else
            fprintf(o, "%s-1,-1", i ? "," : "");
    }
    fputs("],\n\"h\": [", o);
    int first = 1;
    for (size_t i = 0; i < s->count; i++) {
        const sim_entity *e = &s->entities[i];
        if (e->present && (e->hidden & PERCEPT_SENSE_BIT(PERCEPT_SIGHT))) {
            fprintf(o, "%s%zu", first ? "" : ",", i);
            first = 0;
        }
    }
    fputs("], \"r\": [", o);
    for (size_t j = 0; j < s->highlight_count; j++) {
        double r[SIM_SENSES], angle = 0, a, half;
        for (int k = 0; k < SIM_SENSES; k++) {
            r[k] = sim_reach(s, s->highlights[j], (percept_sense)k, &a, &half);
            angle = half > 0 ? a : angle;
        }
        fprintf(o, "%s[%.0f, %.0f, %.0f, %.3f]", j ? ", " : "", r[0], r[1], r[2], angle);
    }
    fputs("],\n\"l\": [", o);
    first = 1;
    for (size_t j = 0; j < s->highlight_count; j++) {
        size_t i = s->highlights[j];
        if (!s->entities[i].present)
            continue;
        for (int k = 0; k < SIM_SENSES; k++) {
            size_t n = sim_perceived(s, i, (percept_sense)k, &h->ids, &h->cap);
            if (n == (size_t)-1)
                return -1;
            if (n == 0)
                continue;
            fprintf(o, "%s[%zu,%d", first ? "" : ",\n", j, k);
            for (size_t m = 0; m < n; m++)
                fprintf(o, ",%zu", sim_index(s, h->ids[m]));
            fputc(']', o);
            first = 0;
        }
    }
    fputs("],\n\"s\": [", o);
    for (first = 1; h->noises < s->noise_count; h->noises++, first = 0) {
        const sim_noise *n = &s->noises[h->noises];
        fprintf(o, "%s[%.0f,%.0f,%d]", first ? "" : ",", n->x, n->y, n->bell);
    }
    fputs("]}", o);
    h->frames++;
    return 0;
}

void sim_html_finish(sim_html *h, const unsigned long *changes, int ticks, const char *summary)
{
    FILE *o = h->out;

    fputs("\n],\n\"changes\": [", o);
    for (int t = 0; t < ticks; t++) {
        const unsigned long *c = changes + (size_t)t * SIM_SENSES;
        fprintf(o, "%s[%lu,%lu,%lu]", t == 0 ? "" : t % 10 == 0 ? ",\n" : ",", c[0], c[1], c[2]);
    }
    fputs("],\n\"summary\": ", o);
    put_string(o, summary);
    fputs("\n};\n</script>\n", o);
    fputs(page_script, o);
}

void sim_html_free(sim_html *h)
{
    free(h->ids);
    h->ids = NULL;
    h->cap = 0;
}
