#!/bin/sh
# check.sh - checks a backend plugin built in this directory against an
# installed percept: generated workloads (walks, teleports, entities outside
# the bounds, exact-boundary distances, churn, range changes, hide/show) are
# replayed with the plugin and with the bruteforce reference, and every event
# must be the same; bad parameters must be refused with the right key named;
# the plugin must not take memory from the C library.
#
# Usage: check.sh NAME [ENTRY...]
#   Each ENTRY is one or more KEY=VALUE pairs separated by spaces, all given
#   together in every sense section, and gets its own runs (the runs without
#   parameters always come first):
#     check.sh mine 'cell=8 exact=no' exact=yes     (two entries)
# Environment: REPLAY (default percept-replay), SEEDS (default "1 2 3 4"),
# CHECK_TIMEOUT (seconds a replay may take, default 120: a plugin that loops),
# CHECK_BAD_PARAMS: entries separated by ';' or newlines, each one or more
#   KEY=VALUE pairs of which the LAST is bad (an unknown key or a bad value);
#   the pairs go into [sight] one a line, in order, and the config must be
#   refused with exit status 2 and "FILE:LINE: key 'KEY' in [sight]" naming
#   the bad pair's line and key:
#     CHECK_BAD_PARAMS='cell=eight; cell=0; exact=no cell=1e400'
# Whatever is configured, an unknown key is also tried alone and after the
# pairs of the first ENTRY (so a plugin that blames parameter 0 is caught).
#
# Values cannot hold spaces or ';'. Where nm(1) is installed, the plugin's
# undefined dynamic symbols must name no allocator of the C library (malloc,
# free, strdup...): all memory comes from setup->host->alloc. The rest is
# seen only through events: memory_usage(), reserve() under failure and
# allocation in query() are checked by percept-plugin-check, which
# `make check` runs first (docs/plugins.md, "Testing your plugin").

set -u
set -f # parameter entries are split into pairs, never expanded as file names
nl='
'
ifs=" $(printf '\t')$nl"
IFS=$ifs
name=${1:?usage: check.sh NAME [KEY=VALUE...] ['KEY=VALUE KEY=VALUE'...]}
shift
replay=${REPLAY:-percept-replay}
seeds=${SEEDS:-"1 2 3 4"}
here=$(cd "$(dirname "$0")" && pwd)
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

if [ ! -f "$here/$name.so" ]; then
    echo "check.sh: $here/$name.so is not built (run make)"
    exit 1
fi
if ! command -v "$replay" >/dev/null 2>&1; then
    echo "check.sh: percept-replay not found ('$replay'); set REPLAY=/path/to/percept-replay"
    exit 1
fi

# words WORD...: the words on one line, one space apart (an entry's pairs, tidied).
words() {
    printf '%s\n' "$*"
}
# check_entry ENTRY: stops the script when a word of ENTRY is not KEY=VALUE,
# or a key comes twice (percept refuses that before the plugin sees it).
check_entry() {
    keys=" "
    for pair in $1; do
        case $pair in
        [!=]*=*) ;;
        *)
            echo "check.sh: '$pair' in '$1' is not KEY=VALUE (an entry is KEY=VALUE pairs separated by spaces)"
            exit 1
            ;;
        esac
        case $keys in
        *" ${pair%%=*} "*)
            echo "check.sh: key '${pair%%=*}' twice in '$1' (percept refuses a key set twice itself)"
            exit 1
            ;;
        esac
        keys="$keys${pair%%=*} "
    done
}
for entry in "$@"; do
    check_entry "$entry"
done
IFS=";$nl"
for entry in ${CHECK_BAD_PARAMS:-}; do
    IFS=$ifs
    check_entry "$entry"
done
IFS=$ifs

timeout=${CHECK_TIMEOUT:-120}
run_replay() { # like percept-replay, stopped after $timeout seconds where timeout(1) exists
    if command -v timeout >/dev/null 2>&1; then
        timeout "$timeout" "$replay" "$@"
    else
        "$replay" "$@"
    fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plugin-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# Memory taken from the C library bypasses setup->host->alloc: the
# application's allocator, its accounting and its failure tests never see it.
allocators="malloc calloc realloc free posix_memalign aligned_alloc memalign valloc pvalloc"
allocators="$allocators reallocarray strdup strndup __strdup __strndup"
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: nm not found: not checked that $name.so takes no memory from the C library"
elif ! nm -D --undefined-only "$here/$name.so" >"$tmp/undef" 2>"$tmp/err"; then
    echo "SKIP: nm -D --undefined-only failed ($(head -n 1 "$tmp/err")):" \
        "not checked that $name.so takes no memory from the C library"
else
    # The last field of each line, less its @VERSION, that is an allocator.
    found=$(awk -v list="$allocators" '
        BEGIN { n = split(list, a); for (i = 1; i <= n; i++) alloc[a[i]] = 1 }
        { s = $NF; sub(/@.*/, "", s); if ((s in alloc) && !seen[s]++) print s }' "$tmp/undef")
    for sym in $found; do
        fail "$name.so calls $sym() of the C library: all memory must come from setup->host->alloc (docs/plugins.md)"
    done
    if [ -z "$found" ]; then
        pass "$name.so calls no allocator of the C library (nm -D: no malloc, free, strdup...)"
    fi
fi

# gen SEED: a deterministic workload in the trace format (percept's docs/trace-format.md).
# Coordinates are fractional as well as whole, and some stand a rounding
# error away from another's range: where a backend computes its window
# differently from the core's dx*dx + dy*dy <= r*r, those are the entities
# it drops.
gen() {
    # In the C locale: awk writes numbers with the locale's decimal point,
    # and a trace's is '.' whatever the locale ('12,5' is not a coordinate).
    LC_ALL=C awk -v seed="$1" '
    function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
    function pick(n) { return int(rnd() * n) }
    function range() {
        r = rnd()
        if (r < 0.15) return 0
        if (r < 0.18) return 5000 + pick(5)    # wider than the world
        if (r < 0.20) return 3000000 + pick(5) # wider than the farthest teleport
        if (r < 0.35) return pick(15000) / 100 # fractional
        return 5 * pick(30)                    # multiples of 5: 3-4-5 boundaries happen
    }
    function add(id) {
        x[id] = pick(1100) - 50; y[id] = pick(1100) - 50   # some outside 0..1000
        line = sprintf("add %d %d %d sight=%d hearing=%d smell=%d", id, x[id], y[id], range(), range(), range())
        if (rnd() < 0.2) line = line " hide=sight"
        print line; live[id] = 1
    }
    # The double next to v, below or above: the smallest step that changes v.
    function hair(v,   sg, d) {
        sg = rnd() < 0.5 ? -1 : 1
        d = (v < 0 ? -v : v) * 1e-17 + 1e-300
        while (v + sg * d == v) d *= 2
        return v + sg * d
    }
    BEGIN {
        OFMT = CONVFMT = "%.17g"   # print every fractional coordinate exactly
        state = seed * 7919 + 1
        n = 150
        print "world 0 0 1000 1000"
        for (i = 1; i <= n; i++) add(i)
        for (op = 0; op < 4000; op++) {
            id = 1 + pick(n)
            if (!live[id]) { add(id); continue }
            r = rnd()
            if (r < 0.40) {                       # a whole step
                x[id] += pick(21) - 10; y[id] += pick(21) - 10
                print "move", id, x[id], y[id]
            } else if (r < 0.65) {                # a fractional step
                x[id] += (pick(2001) - 1000) / 100; y[id] += (pick(2001) - 1000) / 100
                print "move", id, x[id], y[id]
            } else if (r < 0.72) {                # a hair from the boundary of another
                o = 1 + pick(n)
                if (o != id && live[o]) {
                    if (rnd() < 0.7) {            # beside o, above it or at 3-4-5
                        k = 1 + pick(20); d = pick(3); R = 5 * k
                        ox = x[o] + pick(3) - 1; oy = y[o] + pick(3) - 1
                        dx = d == 0 ? 5 * k : d == 1 ? 0 : 3 * k; dy = d == 0 ? 0 : d == 1 ? 5 * k : 4 * k
                        if (rnd() < 0.5) dx = -dx
                        if (rnd() < 0.5) dy = -dy
                    } else {                      # o at 3m seeing 2m, to m: there the
                        m = 1 + pick(20); R = 2 * m   # subtraction rounds, and a window
                        sg = rnd() < 0.5 ? 1 : -1     # computed as x - r is not the relation
                        if (rnd() < 0.5) { ox = 3 * m * sg; oy = y[o]; dx = -2 * m * sg; dy = 0 }
                        else { ox = x[o]; oy = 3 * m * sg; dx = 0; dy = -2 * m * sg }
                    }
                    # The one standing still goes first, so that the query of the
                    # mover, not the observer index of the core, must find it.
                    x[id] = dx == 0 ? ox : hair(ox + dx); y[id] = dy == 0 ? oy : hair(oy + dy)
                    print "move", id, x[id], y[id]
                    print "range", o, "sight", R
                    x[o] = ox; y[o] = oy
                    print "move", o, x[o], y[o]
                }
            } else if (r < 0.75) {                # a teleport, sometimes far away
                x[id] = rnd() < 0.3 ? pick(2000000) - 1000000 : pick(1000)
                y[id] = pick(1000)
                print "move", id, x[id], y[id]
            } else if (r < 0.82) {                # exactly on the boundary of another
                o = 1 + pick(n)
                if (o != id && live[o]) {
                    k = 1 + pick(20)
                    print "range", o, "sight", 5 * k
                    x[id] = x[o] + 3 * k; y[id] = y[o] - 4 * k
                    print "move", id, x[id], y[id]
                }
            } else if (r < 0.86) {
                print "remove", id; live[id] = 0
            } else if (r < 0.93) {
                s = pick(3); split("sight hearing smell", names, " ")
                print "range", id, names[s + 1], range()
            } else {
                print (rnd() < 0.5 ? "hide" : "show"), id, "sight"
            }
        }
    }'
}

# config FILE BACKEND [ENTRY]: every sense on BACKEND with all of ENTRY's
# KEY=VALUE pairs, plugins from this directory.
config() {
    {
        printf '[percept]\nbackend = %s\nplugin_dir = %s\n' "$2" "$here"
        if [ -n "${3:-}" ]; then
            for sense in sight hearing smell; do
                printf '[%s]\n' "$sense"
                for pair in $3; do
                    printf '%s = %s\n' "${pair%%=*}" "${pair#*=}"
                done
            done
        fi
    } >"$1"
}

config "$tmp/ref.ini" bruteforce
for params in "" "$@"; do
    config "$tmp/test.ini" "$name" "$params"
    label="$name${params:+ ($params)}"
    for seed in $seeds; do
        gen "$seed" >"$tmp/w.trace"
        if ! run_replay --config "$tmp/ref.ini" "$tmp/w.trace" >"$tmp/want" 2>"$tmp/err"; then
            fail "bruteforce on workload $seed: $(head -n 1 "$tmp/err")"
            continue
        fi
        run_replay --config "$tmp/test.ini" "$tmp/w.trace" >"$tmp/got" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -eq 124 ]; then
            fail "$label on workload $seed: no answer after $timeout s (a loop in the plugin?)"
        elif [ "$rc" -ne 0 ]; then
            fail "$label on workload $seed: $(head -n 1 "$tmp/err")"
        elif cmp -s "$tmp/want" "$tmp/got"; then
            pass "$label gives bruteforce's $(wc -l <"$tmp/want" | tr -d ' ') events on workload $seed"
        else
            fail "$label differs from bruteforce on workload $seed (< bruteforce, > $name):"
            diff "$tmp/want" "$tmp/got" | head -n 8 | sed 's/^/    /'
        fi
    done
done

# refuse PAIRS WHAT: a config whose [sight] holds PAIRS, one a line, the last
# of them bad, must be refused with exit status 2 and a message naming that
# line and key. A plugin that blames another parameter index names another
# line and key; one that reads numbers with atoi() accepts "eight".
echo "add 1 0 0 sight=1" >"$tmp/one.trace"
refuse() {
    printf '[percept]\nbackend = %s\nplugin_dir = %s\n[sight]\n' "$name" "$here" >"$tmp/bad.ini"
    line=4
    for pair in $1; do
        line=$((line + 1))
        key=${pair%%=*}
        printf '%s = %s\n' "$key" "${pair#*=}" >>"$tmp/bad.ini"
    done
    want="bad.ini:$line: key '$key' in [sight]"
    run_replay --config "$tmp/bad.ini" "$tmp/one.trace" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        fail "$name accepted $2"
    elif [ "$rc" -eq 124 ]; then
        fail "$name on $2: no answer after $timeout s (a loop in the plugin?)"
    elif [ "$rc" -gt 128 ]; then
        fail "$name on $2: killed by signal $((rc - 128)) (a crash?): $(head -n 1 "$tmp/err")"
    elif [ "$rc" -ne 2 ]; then
        fail "$name on $2: exit status $rc, not 2: $(head -n 1 "$tmp/err")"
    elif grep -F -q "$want" "$tmp/err"; then
        pass "$name refuses $2: $(head -n 1 "$tmp/err")"
    else
        fail "$name: unexpected message for $2 (want \"$want\"): $(head -n 1 "$tmp/err")"
    fi
}

# An unknown parameter, alone and after the first entry's pairs (index 1 or later).
unknown=percept_check_no_such_key=1
refuse "$unknown" "an unknown parameter"
for entry in "$@"; do
    # shellcheck disable=SC2086 # split into its pairs
    first=$(words $entry)
    if [ -n "$first" ]; then
        refuse "$first $unknown" "an unknown parameter after $first"
        break
    fi
done
# The author's bad parameters (CHECK_BAD_PARAMS), the last pair of each entry bad.
IFS=";$nl"
for entry in ${CHECK_BAD_PARAMS:-}; do
    IFS=$ifs
    # shellcheck disable=SC2086 # split into its pairs
    pairs=$(words $entry)
    if [ -n "$pairs" ]; then
        refuse "$pairs" "a bad parameter ($pairs)"
    fi
done
IFS=$ifs

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
