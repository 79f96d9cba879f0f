#!/bin/sh
# Records the DFTracer traces kept here: pool.py (a Python pool of 4 forked
# workers) under DFTracer's preload library, once with DFTracer's metadata
# (sizes, paths, command line) and once with its default settings.
#
#   DFTRACER_PREFIX=/path/to/dftracer/install sh record.sh
#
# DFTracer 1.0.8 (hariharan-devarajan/dftracer, tag v1.0.8) builds with
# cmake (-DDFTRACER_BUILD_PYTHON_BINDINGS=OFF -DDFTRACER_DISABLE_HWLOC=ON)
# over GOTCHA 1.0.7, cpp-logger v0.0.4 and brahma v0.0.9 installed in the
# same prefix, and Debian's libyaml-cpp-dev.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lib=${DFTRACER_PREFIX:?set DFTRACER_PREFIX}/lib
work=/tmp/dftracer-pool
rm -rf "$work" && mkdir -p "$work/data" "$work/meta" "$work/bare"
run() {
	env LD_LIBRARY_PATH="$lib" DFTRACER_ENABLE=1 DFTRACER_INIT=PRELOAD DFTRACER_DATA_DIR="$work/data" \
		DFTRACER_LOG_FILE="$work/$1/pool" ${2:-} LD_PRELOAD="$lib/libdftracer_preload.so" \
		/usr/bin/python3 "$here/pool.py" "$work/data"
}
run meta DFTRACER_INC_METADATA=1
run bare
# DFTracer's own names (<prefix>-<executable>-<pid>-preload.pfw), compressed
# as DFTRACER_TRACE_COMPRESSION would, in a folder per setting.
rm -rf "$here/metadata" "$here/default"
mkdir -p "$here/metadata" "$here/default"
for f in "$work"/meta/pool-pool.py-*-preload.pfw; do gzip -9 -n -c "$f" >"$here/metadata/$(basename "$f").gz"; done
for f in "$work"/bare/pool-pool.py-*-preload.pfw; do gzip -9 -n -c "$f" >"$here/default/$(basename "$f").gz"; done
