#!/bin/sh
# fill.sh - make a manual page from its template in docs/man/: fill in the
# version and this installation's paths, which only the build knows.
#
#   sh fill.sh VERSION CONFIG PLUGIN_DIR DOC_DIR < page.in > page
#
# Each path is written so troff may break the line after any '/' (\: is an
# invisible break point) and prints its '-' as a minus, not a hyphen. An
# installation under a deep prefix (make distcheck's is one) would otherwise
# give a line troff cannot break, and a path a reader could not paste back.
if [ $# -ne 4 ]; then
    echo "usage: fill.sh VERSION CONFIG PLUGIN_DIR DOC_DIR < page.in > page" >&2
    exit 2
fi

# The troff form of path $1, escaped for the replacement side of sed's s|||.
troff_path() {
    printf '%s\n' "$1" | sed -e 's/[\\|&]/\\&/g' -e 's|-|\\\\-|g' -e 's|/|/\\\\:|g'
}

version=$(printf '%s\n' "$1" | sed -e 's/[\\|&]/\\&/g')
config=$(troff_path "$2")
plugin_dir=$(troff_path "$3")
doc_dir=$(troff_path "$4")
exec sed -e "s|@VERSION@|$version|g" \
    -e "s|@PERCEPT_CONFIG@|$config|g" \
    -e "s|@PERCEPT_PLUGIN_DIR@|$plugin_dir|g" \
    -e "s|@PERCEPT_DOC_DIR@|$doc_dir|g"
