#!/bin/bash
# replay-identity.sh OLD NEW [TRACE...]
#
# Checks that a change to the model left its predictions alone: runs
# `iopred replay --json --model-alone` with two builds of iopred (OLD and NEW,
# paths to the binaries) on the same traces and compares their outputs, every
# field but the timing (update_predict_ns_per_event), and their error output.
# Without TRACE arguments it takes the repository's recorded traces: the
# centersim fio, IOR and LAMMPS traces and the two largest traces of every
# period-corpus run. Exits 1 and prints the differences when any output
# differs.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_IOPRED NEW_IOPRED [TRACE...]" >&2
  exit 2
fi
old=$1 new=$2
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
  traces=("$repo"/analyzer/centersim/traces/*/*.iopred.zst)
  for d in "$repo"/tests/periodcorpus/runs/*/; do
    while read -r t; do traces+=("$t"); done < <(ls -S "$d"*.iopred.zst 2>/dev/null | head -2)
  done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
replay() { # BIN OUTDIR TRACE
  local name
  name=$(echo "$3" | sed 's|/|_|g')
  nice "$1" replay --json --model-alone --jobs 1 "$3" 2>"$2/$name.stderr" |
    jq -S 'del(.. | .update_predict_ns_per_event?)' >"$2/$name.json" || echo "exit $?" >>"$2/$name.stderr"
}
mkdir -p "$work/old" "$work/new"
n=0
for t in "${traces[@]}"; do
  replay "$old" "$work/old" "$t"
  replay "$new" "$work/new" "$t"
  n=$((n + 1))
  printf '\r%d of %d traces' "$n" "${#traces[@]}" >&2
done
echo >&2
if diff -r "$work/old" "$work/new"; then
  echo "identical on $n traces"
else
  exit 1
fi
