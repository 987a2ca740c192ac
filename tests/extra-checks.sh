#!/usr/bin/env bash
# tests/extra-checks.sh - the slower checks that .ci/run leaves out, for a
# contributor to run before a change to the core, the build or a plugin:
#   bash tests/extra-checks.sh [STEP...]   (from the top of a clone)
# each in its own build directory _extra-NAME:
#   i386       the suite as a 32-bit x86 build (SSE2's doubles, not x87)
#   s390x      the suite on a big-endian processor under qemu (tests/big-endian.sh)
#   fastmath   configure refuses CFLAGS that change the relation's arithmetic
#   tsan       test_threads and tick traces under ThreadSanitizer (tests/tsan.sh)
#   valgrind   memcheck of the CMocka suites and of every trace replay
#   prefix     a build configured again with another --prefix rebuilds its paths
#   coverage   each source file's share of lines run by the suite
# Name some of them to run only those. Packages come from Debian; a step
# whose packages cannot be installed says so and is skipped, not passed.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
steps=${*:-i386 s390x fastmath tsan valgrind prefix coverage}
jobs=$(nproc 2>/dev/null || echo 2)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need() { # PACKAGE... : 0 when all are installed, after trying to install them
    local missing=() p
    for p in "$@"; do installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null || true
    for p in "$@"; do installed "$p" || return 1; done
}
fresh() { rm -rf "_extra-$1" && mkdir "_extra-$1" && cd "_extra-$1"; }
[ -x configure ] || autoreconf -fi

for step in $steps; do
    cd "$top"
    echo "extra-checks: $step"
    case $step in
    i386)
        pkgs=(gcc-multilib libinih-dev:i386 libcmocka-dev:i386)
        if ! need "${pkgs[@]}"; then
            $SUDO dpkg --add-architecture i386
            $SUDO apt-get update -qq || true
            need "${pkgs[@]}" || { echo "extra-checks: SKIPPED i386: no ${pkgs[*]}"; continue; }
        fi
        fresh i386
        PKG_CONFIG_LIBDIR=/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig \
            ../configure --build=i686-pc-linux-gnu CC='gcc -m32' --enable-werror >/dev/null
        make -j"$jobs" >/dev/null
        make -j"$jobs" check >/dev/null || { cat test-suite.log; exit 1; }
        ;;
    s390x)
        need qemu-user-static debootstrap binutils-s390x-linux-gnu clang || {
            echo "extra-checks: SKIPPED s390x: its packages cannot be installed"; continue; }
        status=0
        $SUDO sh tests/big-endian.sh "$top/_extra-s390x" || status=$?
        [ "$status" -eq 77 ] && { echo "extra-checks: SKIPPED s390x (above: why)"; continue; }
        [ "$status" -eq 0 ] || exit 1
        ;;
    fastmath)
        # A game's CFLAGS may carry -ffast-math or -ffp-contract=fast.
        fresh fastmath
        for cflags in '-O2 -ffast-math' '-O2 -ffp-contract=fast'; do
            if ../configure CFLAGS="$cflags" >configure.out 2>&1; then
                echo "extra-checks: configure accepted CFLAGS='$cflags'"; exit 1
            fi
            grep '^configure: error:' configure.out
        done
        ;;
    tsan)
        sh tests/tsan.sh "$top/_extra-tsan"
        ;;
    valgrind)
        need valgrind || { echo "extra-checks: SKIPPED valgrind: not installed"; continue; }
        fresh valgrind
        ../configure >/dev/null && make -j"$jobs" >/dev/null
        make check-valgrind
        ;;
    prefix)
        # The library's plugin directory, the tools' default config and the
        # manual pages hold the installation's paths (Makefile.am).
        fresh prefix
        ../configure >/dev/null && make -j"$jobs" >/dev/null
        ../configure --prefix=/opt/percept-elsewhere >/dev/null && make -j"$jobs" >/dev/null
        make check TESTS=tests/install-dirs.test >/dev/null ||
            { cat tests/install-dirs.log; exit 1; }
        ;;
    coverage)
        fresh coverage
        ../configure --enable-coverage CFLAGS='-O0 -g' >/dev/null
        make -j"$jobs" >/dev/null
        make -j"$jobs" coverage >coverage.log 2>&1 || { tail -n 60 coverage.log; exit 1; }
        tail -n 3 coverage.log
        ;;
    *)
        echo "extra-checks: no step '$step'" >&2; exit 2
        ;;
    esac
done
echo "extra-checks: done ($steps)"
