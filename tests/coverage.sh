#!/bin/sh
# coverage.sh - each source file's line coverage from the counts the last
# `make check` left in a build configured with --enable-coverage. `make
# coverage` clears the counts, runs the suite and then this, from the top of
# the build tree:
#   sh SRCDIR/tests/coverage.sh [GCOV]
# Reported: the library's, the shipped plugins' and the tools' sources and
# headers. A line counts as run when any program built from it ran it (grid.c
# builds grid and tower; src/decimal.c the library, the plugins and the
# bench). Lines never compiled, such as another processor's side of an #if,
# are no lines to gcov. Programs that end with _exit() (percept-plugin-check's
# forked checks) leave no counts.
set -u
gcov=${1:-gcov}
if ! command -v "$gcov" >/dev/null 2>&1; then
    echo "coverage.sh: $gcov not found (it comes with GCC)" >&2
    exit 2
fi
objects=$(find src plugins tools -name '*.gcno' 2>/dev/null)
if [ -z "$objects" ]; then
    echo "coverage.sh: no .gcno files under $(pwd)/src, plugins, tools: configure with" \
        "--enable-coverage, build, and run this from the top of the build tree" >&2
    exit 2
fi

# gcov -t writes each object's annotated sources: a "Source:" line, then
# "COUNT:LINE:text" with COUNT '-' (no code), '#####' or '=====' (never run),
# or the times run (with '*' when some of the line's blocks were not).
for g in $objects; do
    "$gcov" -t -o "$g" "$g" 2>/dev/null
done | awk '
    # The path from the last src/, plugins/ or tools/ on: the same for a
    # build beside the sources or in them, and outside them (system headers)
    # nothing.
    function ours(path,    p, best, i, n, m, rest) {
        path = "/" path
        best = 0
        n = split("/src/ /plugins/ /tools/", m, " ")
        for (i = 1; i <= n; i++)
            for (p = index(path, m[i]); p > 0; ) {
                if (p > best) best = p
                rest = index(substr(path, p + 1), m[i])
                p = rest ? p + rest : 0
            }
        return best ? substr(path, best + 1) : ""
    }
    {
        split($0, f, ":")
        count = f[1]; gsub(/ /, "", count)
        line = f[2] + 0
    }
    line == 0 && f[3] == "Source" { file = ours(substr($0, index($0, "Source:") + 7)); next }
    file == "" || count == "-" || line == 0 { next }
    {
        key = file SUBSEP line
        lines[key] = file
        if (count !~ /^(#####|=====)$/) run[key] = 1
    }
    END {
        for (key in lines) {
            total[lines[key]]++
            if (key in run) hit[lines[key]]++
        }
        for (file in total) {
            group = file; sub(/\/.*/, "", group)
            rank = group == "src" ? 1 : group == "plugins" ? 2 : 3
            printf "%d %s %s %d %d\n", rank, group, file, hit[file], total[file]
        }
    }' | sort -k1,1n -k3,3 | cut -d' ' -f2- >coverage.tmp

if [ ! -s coverage.tmp ]; then
    echo "coverage.sh: gcov reported nothing: has make check run in this build?" >&2
    rm -f coverage.tmp
    exit 1
fi
echo "Line coverage of make check (gcov):"
awk '{
        printf "  %-32s %6.1f%% of %5d lines\n", $2, 100 * $3 / $4, $4
        hit[$1] += $3; all[$1] += $4
    }
    END {
        n = split("src plugins tools", g, " ")
        split("library plugins tools", label, " ")
        for (i = 1; i <= n; i++)
            if (all[g[i]])
                printf "%s: %.1f%% of %d lines\n", label[i], 100 * hit[g[i]] / all[g[i]], all[g[i]]
    }' coverage.tmp
rm -f coverage.tmp
