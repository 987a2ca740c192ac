#!/bin/sh
# tsan.sh - test_threads under ThreadSanitizer: the library's sources and the
# suite built into one binary, each shipped plugin built likewise, all with
# clang -fsanitize=thread; then percept-replay, built likewise, runs traces
# with tick blocks on 2 and 4 threads. Not part of make check (it needs
# clang and its own build); tests/extra-checks.sh runs it, and so can
# anyone from the source tree:
#   sh tests/tsan.sh [WORKDIR]      (default: a temporary directory)
# Exits non-zero on a failed test or a ThreadSanitizer report.
set -eu
if [ $# -gt 0 ]; then
    mkdir -p "$1"
    work=$(cd "$1" && pwd) # before the cd below: a relative WORKDIR means from here
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/percept-tsan.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
cd "$(dirname "$0")/.."
cc=${CC_TSAN:-clang}
flags="-std=c11 -fsanitize=thread -g -O1 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc"
# What every shipped plugin links besides its own source (Makefile.am).
util="plugins/backend_util.c plugins/entry_block.c plugins/cell_blocks.c src/decimal.c"
for p in bruteforce grid hashgrid hexgrid crosslist; do
    $cc $flags -fPIC -shared -fvisibility=hidden "plugins/$p.c" $util -o "$work/$p.so"
done
$cc $flags -fPIC -shared -fvisibility=hidden -DGRID_AS_TOWER plugins/grid.c $util \
    -o "$work/tower.so"
# The installation paths the build's Makefile would write (Makefile.am,
# "installation paths"): here, the plugins built above.
{
    echo '/* install_dirs.h - written by tests/tsan.sh */'
    printf '#define PERCEPT_PLUGIN_DIR "%s"\n' "$work"
    printf '#define PERCEPT_DEFAULT_CONFIG "%s"\n' "$work/percept.ini"
    printf '#define PERCEPT_DOC_DIR "%s"\n' "$work"
} >"$work/install_dirs.h"
$cc $flags -I"$work" src/*.c tests/test_threads.c tests/testutil.c tests/model.c -o "$work/test_threads" \
    -linih -lcmocka -ldl -lpthread -lm
# halt_on_error: a data race fails the run instead of scrolling past.
PERCEPT_PLUGIN_PATH=$work PERCEPT_TEST_BACKENDS="bruteforce grid hashgrid tower hexgrid crosslist" \
    TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" "$work/test_threads"
echo "tsan: test_threads passed with no ThreadSanitizer report"
# percept-replay likewise, on traces with tick blocks run on 2 and 4
# threads: the events must be the reference's, with no report. The trace
# generator and the reference need no sanitizer.
$cc $flags -I"$work" -Itools src/*.c tools/percept-replay.c tools/trace_syntax.c tools/cli.c \
    -o "$work/percept-replay" -linih -ldl -lpthread -lm
$cc -std=c11 -O1 tests/tracegen.c -o "$work/tracegen"
$cc -std=c11 -O1 tests/reference.c -o "$work/reference" -lm
for kind in ticks v2all; do
    "$work/tracegen" $kind 1 >"$work/$kind.trace"
    "$work/reference" "$work/$kind.trace" >"$work/$kind.expected"
    for b in bruteforce grid hashgrid tower hexgrid crosslist; do
        for n in 2 4; do
            PERCEPT_PLUGIN_PATH=$work TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
                "$work/percept-replay" --backend $b --threads $n "$work/$kind.trace" >"$work/out"
            if ! cmp -s "$work/$kind.expected" "$work/out"; then
                echo "tsan: tracegen $kind 1 with $b on $n threads: not the reference's events"
                exit 1
            fi
        done
    done
done
echo "tsan: tick traces replayed on 2 and 4 threads with no ThreadSanitizer report"
