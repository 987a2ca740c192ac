#!/bin/sh
# installcheck.sh - proves an installed percept works outside the build tree:
# the examples are copied to a scratch directory and built with pkg-config
# alone; the guard example runs on the installed default config and plugins
# (linked with libpercept.a too, where that is installed), and the client
# example on the installed aoi-bands.ini, as bruteforce tells it;
# the plugin template builds against the installed header, loads through
# plugin_dir and gives bruteforce's events; percept-sim runs, is deterministic
# and writes its pictures, and its trace (version 2) replays to its events,
# on the default config and on aoi-bands.ini alike; the sample traces replay
# to their expected output with every installed backend; the manual pages
# carry this installation's paths; the Lua guard runs on the installed Lua
# modules, and the Python package pip-installs into a venv against the
# installed library and runs the Python guard.
#
# Usage: installcheck.sh EXAMPLES_DIR
# Environment (from `make installcheck`): prefix, bindir, libdir, pkglibdir, docdir,
# mandir, sysconfdir, pkgconfigdir, and optionally DESTDIR, CC, PKG_CONFIG, MAKE,
# LUA and LUAJIT (the interpreters of the installed Lua modules), PYTHON (the
# interpreter to pip install the Python package for).
# With DESTDIR the compiled-in paths do not match the files, so the test
# points PERCEPT_PLUGIN_PATH and pkg-config's sysroot at DESTDIR; without it
# (make installcheck, make distcheck) the installed paths are used as is.

set -u
examples=${1:?usage: installcheck.sh EXAMPLES_DIR}
: "${prefix:?}" "${bindir:?}" "${libdir:?}" "${pkglibdir:?}" "${docdir:?}" "${mandir:?}" "${sysconfdir:?}" "${pkgconfigdir:?}"
D=${DESTDIR:-}
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
MAKE=${MAKE:-make}

passed=0
failed=0
pass() {
    passed=$((passed + 1))
    echo "PASS: $1"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
}
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}
# show FILE: the first lines of a log, indented.
show() {
    head -n 12 "$1" | sed 's/^/    /'
}

examples=$(cd "$examples" && pwd) || exit 1
bindings=$examples/../bindings
tmp=$(mktemp -d "${TMPDIR:-/tmp}/percept-installcheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# ---------------------------------------------------------------------------
# The installed copy, and nothing of the build or source tree.

unset PERCEPT_PLUGIN_PATH
PKG_CONFIG_PATH=$D$pkgconfigdir
export PKG_CONFIG_PATH
# Not in the linker's default path: programs built here find libpercept this way.
LD_LIBRARY_PATH=$D$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
if [ -n "$D" ]; then
    PKG_CONFIG_SYSROOT_DIR=$D
    PERCEPT_PLUGIN_PATH=$D$pkglibdir
    export PKG_CONFIG_SYSROOT_DIR PERCEPT_PLUGIN_PATH
fi
conf=$D$sysconfdir/percept/percept.ini
bands=$D$sysconfdir/percept/aoi-bands.ini
sim=$D$bindir/percept-sim
replay=$D$bindir/percept-replay
plugin_check=$D$bindir/percept-plugin-check
echo "installed copy: $D$prefix${D:+ (DESTDIR=$D)}"

for f in "$conf" "$bands" "$sim" "$replay" "$plugin_check" "$D$pkglibdir/bruteforce.so" "$PKG_CONFIG_PATH/percept.pc"; do
    if [ -e "$f" ]; then
        pass "installed: $f"
    else
        fail "not installed: $f"
    fi
done
# The manual pages, with the paths of this installation filled in.
for page in man1/percept-bench.1 man1/percept-plugin-check.1 man1/percept-replay.1 \
    man1/percept-sim.1 man3/percept.3 man5/percept.ini.5; do
    if [ -f "$D$mandir/$page" ] && ! grep -q '@[A-Z_]*@' "$D$mandir/$page"; then
        pass "installed: $D$mandir/$page"
    else
        fail "not installed, or with a placeholder left in it: $D$mandir/$page"
    fi
done
# The page's paths without troff's escapes (\: a break point, \- a minus).
sed -e 's/\\://g' -e 's/\\-/-/g' "$D$mandir/man5/percept.ini.5" >"$tmp/man5.txt" 2>/dev/null
if grep -qF "$sysconfdir/percept/percept.ini" "$tmp/man5.txt" &&
    grep -qF "$pkglibdir" "$tmp/man5.txt"; then
    pass "percept.ini(5) names the installed config and plugin directory"
else
    fail "percept.ini(5) does not name $sysconfdir/percept/percept.ini and $pkglibdir"
fi
# The installed sample traces, as percept-replay(1) shows: every installed
# backend gives the output the independent reference gave.
for trace in "$D$docdir"/traces/*.trace; do
    if [ ! -f "$trace" ]; then
        fail "no sample traces installed in $D$docdir/traces"
        break
    fi
    for so in "$D$pkglibdir"/*.so; do
        b=$(basename "$so" .so)
        if "$replay" --backend "$b" "$trace" >"$tmp/trace.out" 2>"$tmp/trace.err" &&
            cmp -s "$tmp/trace.out" "${trace%.trace}.expected"; then
            pass "installed sample ${trace##*/} with $b: the expected output"
        else
            fail "installed sample ${trace##*/} with $b differs from ${trace%.trace}.expected"
            show "$tmp/trace.err"
        fi
    done
done
la=$(cd "$D$pkglibdir" && ls ./*.la 2>/dev/null)
if [ -z "$la" ]; then
    pass "no libtool archives beside the plugins"
else
    fail "libtool archives installed beside the plugins: $la"
fi
if "$plugin_check" --memory-required "$D$pkglibdir"/*.so >"$tmp/pc.out" 2>&1; then
    pass "the installed percept-plugin-check passes the installed plugins: $(grep -c 'checks passed' "$tmp/pc.out") of them"
else
    fail "the installed percept-plugin-check fails an installed plugin:"
    grep -v '^PASS' "$tmp/pc.out" >"$tmp/pc.err"
    show "$tmp/pc.err"
fi
[ "$failed" -eq 0 ] || finish

if cflags=$($PKG_CONFIG --cflags percept) && libs=$($PKG_CONFIG --libs percept); then
    pass "pkg-config percept: $cflags $libs"
else
    fail "pkg-config cannot find percept in $PKG_CONFIG_PATH"
    finish
fi

cp -R "$examples" "$tmp/examples" && chmod -R u+w "$tmp/examples" || exit 1
cd "$tmp/examples" || exit 1
# The plugin template a plugin author copies is the installed one
# (docs/plugins.md): use it rather than the source tree's.
template=$D$docdir/examples/plugin-template
if [ -f "$template/xsort.c" ] && [ -x "$template/check.sh" ]; then
    pass "installed: $template"
    rm -rf plugin-template && cp -R "$template" plugin-template && chmod -R u+w plugin-template ||
        exit 1
else
    fail "the plugin template is not installed in $template"
fi

# ---------------------------------------------------------------------------
# The guard example: NPC AI code built the way a user builds it.

# shellcheck disable=SC2086 # pkg-config's flags are lists
if $CC -std=c11 -Wall -Wextra -o npc_guard npc_guard.c $cflags $libs >"$tmp/log" 2>&1; then
    pass "npc_guard builds with pkg-config --cflags --libs percept"
    if ./npc_guard "$conf" >"$tmp/guard.out" 2>"$tmp/log" &&
        cmp -s npc_guard.expected "$tmp/guard.out"; then
        pass "npc_guard on the installed config: $(grep -c 'alarm' "$tmp/guard.out") alarms, as expected"
    else
        fail "npc_guard on the installed config: $(head -n 1 "$tmp/log")"
        diff npc_guard.expected "$tmp/guard.out" | head -n 10 | sed 's/^/    /'
    fi
else
    fail "npc_guard does not build:"
    show "$tmp/log"
fi

# With a static library installed (./configure --enable-static), the guard
# linked with the archive itself and the dependencies pkg-config --static
# names tells the same story, with the same shared plugins loaded at run
# time.
if [ -f "$D$libdir/libpercept.a" ]; then
    # shellcheck disable=SC2086 # pkg-config's flags are lists
    if static_libs=$($PKG_CONFIG --static --libs percept | sed -e 's/^-lpercept / /' -e 's/ -lpercept / /' -e 's/ -lpercept$//') &&
        $CC -std=c11 -o npc_guard_static npc_guard.c $cflags "$D$libdir/libpercept.a" \
            $static_libs >"$tmp/log" 2>&1 &&
        ./npc_guard_static "$conf" >"$tmp/guard-static.out" 2>"$tmp/log" &&
        cmp -s npc_guard.expected "$tmp/guard-static.out"; then
        pass "npc_guard linked with libpercept.a and pkg-config --static --libs ($static_libs)"
    else
        fail "npc_guard with the static library:"
        show "$tmp/log"
    fi
fi

# ---------------------------------------------------------------------------
# The client replication example, on the installed config of replication
# bands (its senses near, mid and far), compiled in as its default: it
# checks every client's replica against the distances itself, margins and
# heights included, and exits 1 on a difference; bruteforce must tell it
# the same story.

# shellcheck disable=SC2086 # pkg-config's flags are lists
if $CC -std=c11 -Wall -Wextra -o aoi_clients aoi_clients.c $cflags $libs \
    -DAOI_CONFIG="\"$bands\"" >"$tmp/log" 2>&1; then
    pass "aoi_clients builds with pkg-config --cflags --libs percept"
    printf '[percept]\nbackend = bruteforce\nmove_events = on\n[world]\nsenses = near mid far\n' \
        >brute-bands.ini
    if ./aoi_clients >"$tmp/aoi.out" 2>"$tmp/log" &&
        ./aoi_clients brute-bands.ini >"$tmp/aoi-brute.out" 2>>"$tmp/log" &&
        cmp -s "$tmp/aoi.out" "$tmp/aoi-brute.out" &&
        tail -n 1 "$tmp/aoi.out" | grep -q "^every replica matched"; then
        pass "aoi_clients on the installed aoi-bands.ini: every replica matched, as with bruteforce"
    else
        fail "aoi_clients: a replica differed, or the backends disagree: $(head -n 1 "$tmp/log")"
        tail -n 3 "$tmp/aoi.out" | sed 's/^/    /'
    fi
else
    fail "aoi_clients does not build:"
    show "$tmp/log"
fi

# ---------------------------------------------------------------------------
# The plugin template: built out of tree, loaded through plugin_dir.

if (cd plugin-template && $MAKE CC="$CC" PKG_CONFIG="$PKG_CONFIG") >"$tmp/log" 2>&1 &&
    [ -f plugin-template/xsort.so ]; then
    pass "the plugin template builds against the installed <percept/backend.h>"
    if (cd plugin-template && $MAKE check REPLAY="$replay" PLUGIN_CHECK="$plugin_check") \
        >"$tmp/log" 2>&1; then
        pass "plugin template: make check: $(grep 'passed, .* failed' "$tmp/log" | tail -n 1)"
    else
        fail "plugin template: make check failed:"
        grep -v '^PASS' "$tmp/log" >"$tmp/log2"
        show "$tmp/log2"
    fi
    printf '[percept]\nbackend = xsort\nplugin_dir = plugin-template\n' >xsort.ini
    if ./npc_guard xsort.ini >"$tmp/guard-xsort.out" 2>"$tmp/log" &&
        cmp -s npc_guard.expected "$tmp/guard-xsort.out"; then
        pass "npc_guard with the template plugin (plugin_dir) tells the same story"
    else
        fail "npc_guard with the template plugin: $(head -n 1 "$tmp/log")"
    fi
else
    fail "the plugin template does not build:"
    show "$tmp/log"
fi

# ---------------------------------------------------------------------------
# The scripted guard: the Lua example on the installed module, run as the
# README says, under each interpreter whose module is installed.

for lua in "${LUA:-}:5.4" "${LUAJIT:-}:5.1"; do
    run=${lua%:*}
    cpath=$D$libdir/lua/${lua##*:}
    [ -n "$run" ] && [ -f "$cpath/percept.so" ] || continue
    if LUA_CPATH="$cpath/?.so;;" "$run" npc_guard.lua >"$tmp/guard-lua.out" 2>"$tmp/log" &&
        cmp -s npc_guard_lua.expected "$tmp/guard-lua.out"; then
        pass "npc_guard.lua under $(basename "$run") with $cpath/percept.so"
    else
        fail "npc_guard.lua under $(basename "$run"): $(head -n 1 "$tmp/log")"
        diff npc_guard_lua.expected "$tmp/guard-lua.out" | head -n 10 | sed 's/^/    /'
    fi
done

# ---------------------------------------------------------------------------
# The Python package, installed as the README says: pip, offline, into a
# venv that sees the system's NumPy, built against the installed library;
# then the Python guard tells npc_guard.c's story. pip writes beside
# setup.py, so it builds a copy.

if [ -n "${PYTHON:-}" ] && "$PYTHON" -c 'import ensurepip, numpy' 2>/dev/null; then
    cp -R "$bindings/python" "$tmp/python" && chmod -R u+w "$tmp/python" || exit 1
    if "$PYTHON" -m venv --system-site-packages "$tmp/venv" >"$tmp/log" 2>&1 &&
        "$tmp/venv/bin/pip" install --no-index --no-cache-dir -q "$tmp/python" >"$tmp/log" 2>&1; then
        pass "pip install ./bindings/python into a venv, against the installed library"
        if "$tmp/venv/bin/python" npc_guard.py "$conf" >"$tmp/guard-py.out" 2>"$tmp/log" &&
            cmp -s npc_guard.expected "$tmp/guard-py.out"; then
            pass "npc_guard.py with the pip-installed package tells npc_guard.c's story"
        else
            fail "npc_guard.py with the pip-installed package: $(tail -n 1 "$tmp/log")"
            diff npc_guard.expected "$tmp/guard-py.out" | head -n 10 | sed 's/^/    /'
        fi
    else
        fail "pip install ./bindings/python:"
        show "$tmp/log"
    fi
fi

# ---------------------------------------------------------------------------
# percept-sim on the installed config.

run_sim() { # OUT_PREFIX OPTION...: a small deterministic run
    out=$1
    shift
    "$sim" --entities 300 --ticks 40 --seed 7 --no-timing --quiet --svg "$out.svg" \
        --html "$out.html" "$@" >"$out.txt" 2>"$out.err"
}
run_sim_installed() { # OUT_PREFIX OPTION...: the same on the installed config
    out=$1
    shift
    run_sim "$out" --config "$conf" "$@"
}

if run_sim_installed "$tmp/a" --events "$tmp/a.events" --trace "$tmp/a.trace"; then
    pass "percept-sim on the installed config: $(grep -c '' "$tmp/a.events") events and stimuli"
    # The trace replays to the same events, each at its line: mapped to
    # ticks, sorted, the same. Under aoi-bands.ini, whose senses are others,
    # the world takes the trace's senses and tells the same.
    sort "$tmp/a.events" >"$tmp/a.sorted"
    for c in "$conf" "$bands"; do
        if "$replay" --config "$c" "$tmp/a.trace" >"$tmp/replay.out" 2>"$tmp/replay.err" &&
            awk 'NR == FNR { if ($2 == "tick") t = $3; tick[FNR] = t; next }
                { $1 = tick[$1]; print }' "$tmp/a.trace" "$tmp/replay.out" | sort |
            cmp -s - "$tmp/a.sorted"; then
            pass "percept-sim's trace replays to its events on ${c##*/}"
        else
            fail "percept-sim's trace on ${c##*/} does not replay to its events"
            show "$tmp/replay.err"
        fi
    done
    if grep -q '^  events ' "$tmp/a.txt" && grep -q "picture .*$tmp/a.svg" "$tmp/a.txt"; then
        pass "percept-sim prints its summary and where the pictures are"
    else
        fail "percept-sim's summary lacks the events or the picture's location:"
        show "$tmp/a.txt"
    fi
    if head -n 2 "$tmp/a.svg" | grep -q '<svg' && tail -n 1 "$tmp/a.svg" | grep -q '^</svg>$' &&
        head -n 1 "$tmp/a.html" | grep -q '^<!DOCTYPE html>' &&
        tail -n 1 "$tmp/a.html" | grep -q '^</html>$' &&
        ! grep -qi 'src="http\|href="http' "$tmp/a.html"; then
        pass "percept-sim writes a complete SVG and a self-contained HTML page"
    else
        fail "percept-sim's SVG or HTML is incomplete or loads something from the network"
    fi
    # The summaries differ only in the lines naming the output files.
    if run_sim_installed "$tmp/b" && grep -v 'file://' "$tmp/a.txt" >"$tmp/a.sum" &&
        grep -v 'file://' "$tmp/b.txt" >"$tmp/b.sum" && cmp -s "$tmp/a.sum" "$tmp/b.sum" &&
        cmp -s "$tmp/a.svg" "$tmp/b.svg"; then
        if cmp -s "$tmp/a.html" "$tmp/b.html"; then
            pass "percept-sim is deterministic: same seed, same summary, SVG and HTML"
        else
            fail "percept-sim's HTML differs between two runs with the same seed"
        fi
    else
        fail "percept-sim's summary or SVG differs between two runs with the same seed"
    fi
    printf '[percept]\nbackend = xsort\nplugin_dir = %s\n' "$tmp/examples/plugin-template" \
        >"$tmp/xsort-sim.ini"
    if [ -f plugin-template/xsort.so ]; then
        if run_sim "$tmp/x" --config "$tmp/xsort-sim.ini" --events "$tmp/x.events" &&
            cmp -s "$tmp/a.events" "$tmp/x.events"; then
            pass "percept-sim with the template plugin gives bruteforce's events"
        else
            fail "percept-sim with the template plugin differs from bruteforce: $(head -n 1 "$tmp/x.err")"
        fi
    fi
else
    fail "percept-sim on the installed config:"
    show "$tmp/a.err"
fi

finish
