#!/usr/bin/env bash
# Traces the bundled nested-loop workload with iopred and prints the summary
# of its trace. `make demo` builds the library and the command first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/iopred-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
for f in "$root/build/libiopred.so" "$root/build/iopred"; do
  [[ -e $f ]] || { echo "demo: $f is missing; run make" >&2; exit 1; }
done
gcc -O2 -o "$work/nested" "$root/tests/posix/testdata/nested.c"
mkdir -p "$work/data" "$work/traces"
# 40 outer iterations over 4 files, 64 records of 4 KiB each way per pass.
"$root/build/iopred" run --dir "$work/traces" -- "$work/nested" "$work/data" 40 64 4096
echo "== iopred summary of $(ls "$work/traces")"
"$root/build/iopred" summary "$work/traces"
echo
echo "== iopred replay: how well the in-process model predicted this run"
"$root/build/iopred" replay "$work/traces"
echo
echo "== iopred patterns: the access patterns of the first files"
"$root/build/iopred" patterns "$work/traces" | sed -n '1,12p'
