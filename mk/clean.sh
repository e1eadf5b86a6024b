#!/bin/bash
# make clean: remove the build directory (build/, or $BUILD).
#
# rm -r never follows the symbolic links it meets inside, but it follows
# the path it is given: a trailing "/" after a link removes what the link
# points at, so the name goes without one (a link there is removed, not
# what it points at).  As root, the directories above it must be root's
# alone (mk/safe-build.sh): their owner could otherwise swap one for a
# link while rm runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
while [ "$build" != "${build%/}" ]; do build=${build%/}; done
[ -n "$build" ] || { echo "clean: will not remove /" >&2; exit 2; }
case $build in /*) ;; *) build=$PWD/$build ;; esac
[ -e "$build" ] || [ -L "$build" ] || exit 0
. "$top/mk/safe-build.sh"
safe_path clean "$(dirname -- "$build")"
echo "clean: removing $build"
rm -rf --one-file-system -- "$build"
