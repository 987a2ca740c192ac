#!/bin/sh
# big-endian.sh - the whole suite on a big-endian processor: the library,
# plugins, tools and tests cross-built for Debian's s390x with clang, and
# make check run under qemu's user-mode emulation. What this catches: a
# byte taken from the wrong end of a key, a hash or a float's bits, which
# every little-endian build would pass. Not part of make check (it needs
# root, a Debian mirror and some 5 minutes on 2 cores); .ci/run runs it,
# and so can anyone from the source tree on Debian 12:
#   sh tests/big-endian.sh [WORKDIR]     (default: a temporary directory)
# Needs the packages qemu-user-static, debootstrap and
# binutils-s390x-linux-gnu (.ci/run installs them), and writes qemu's entry
# into /proc/sys/fs/binfmt_misc when it is missing, so that the suite's
# scripts can run the programs they build.
# Exits 77 when a requirement is missing (nothing was tested), 1 when the
# suite fails, 0 when it passes.
set -eu
if [ $# -gt 0 ]; then
    mkdir -p "$1"
    work=$(cd "$1" && pwd)
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/percept-s390x.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
top=$(cd "$(dirname "$0")/.." && pwd)
skip() {
    echo "big-endian: SKIPPED: $*"
    exit 77
}
for tool in clang clang++ debootstrap qemu-s390x-static s390x-linux-gnu-ld; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done

# A sysroot: Debian's s390x packages, unpacked, never run. debootstrap's
# first stage fetches them and unpacks the base system; the headers and
# libraries the build needs come from the packages it only fetched.
root=$work/sysroot
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -f "$root/usr/include/cmocka.h" ]; then
    rm -rf "$root"
    debootstrap --foreign --arch=s390x --variant=minbase \
        --include=libc6-dev,libgcc-12-dev,libstdc++-12-dev,libinih-dev,libcmocka-dev \
        bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        skip "debootstrap could not fetch Debian's s390x packages (see $work/debootstrap.log)"
    for deb in "$root"/var/cache/apt/archives/*.deb; do
        dpkg-deb -x "$deb" "$root"
    done
fi

# The kernel runs an s390x program through qemu once told how to know one.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-s390x" ]; then
    [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null ||
        skip "binfmt_misc is not mounted and cannot be"
    cat /usr/lib/binfmt.d/qemu-s390x.conf >"$binfmt/register" 2>/dev/null ||
        skip "cannot register qemu-s390x in $binfmt (not root?)"
fi
# qemu finds the program's dynamic loader and libraries in the sysroot.
QEMU_LD_PREFIX=$root
export QEMU_LD_PREFIX

jobs=$(nproc 2>/dev/null || echo 2)
build=$work/build
rm -rf "$build" && mkdir -p "$build" && cd "$build"
cross="--target=s390x-linux-gnu --sysroot=$root"
"$top/configure" --host=s390x-linux-gnu --enable-werror CC="clang $cross" \
    PKG_CONFIG_LIBDIR="$root/usr/lib/s390x-linux-gnu/pkgconfig:$root/usr/share/pkgconfig" \
    PKG_CONFIG_SYSROOT_DIR="$root" >configure.out 2>&1 || {
    tail -n 30 configure.out
    exit 1
}
make -j"$jobs" >make.out 2>&1 || {
    tail -n 40 make.out
    exit 1
}
# Built for a big-endian processor, not quietly for this machine: byte 5
# of an ELF header is 2 for big-endian.
[ "$(od -A n -t x1 -j 5 -N 1 src/.libs/libpercept.so | tr -d ' ')" = 02 ] || {
    echo "big-endian: src/.libs/libpercept.so is not a big-endian ELF file"
    exit 1
}
status=0
make -j"$jobs" check >check.out 2>&1 || status=$?
grep -E '^(FAIL|ERROR|SKIP):' check.out || true
if [ "$status" -ne 0 ]; then
    cat test-suite.log
    exit 1
fi
pass=$(sed -n 's/^# PASS: *//p' test-suite.log | head -n1)
echo "big-endian: make check on s390x: ${pass:-0} passed"
