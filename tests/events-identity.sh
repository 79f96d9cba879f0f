#!/bin/bash
# events-identity.sh OLD NEW [COPIES]
#
# Checks that a change to the trace format or its reader left the decoded
# content alone: `iopred events` of two builds (OLD and NEW, paths to the
# binaries) on every trace kept in the repository, standard output, error
# output and exit status compared. With COPIES, a directory of the same
# traces written again by the new writer (named by their paths in the
# repository with / as __, as `IOPRED_REENCODE_OUT=COPIES go test -run
# TestCommittedTracesReencoded ./tracefmt` leaves them), NEW on each copy is
# compared with OLD on its original too (the file's name and the byte
# offsets in error messages set aside: a copy's frames are of other sizes).
# Exits 1 when any output differs.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_IOPRED NEW_IOPRED [COPIES]" >&2
  exit 2
fi
old=$1 new=$2 copies=${3:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# events BIN TRACE NAME: the output of `BIN events TRACE`, NAME for the trace's name in errors.
events() {
  "$1" events "$2" >"$work/out" 2>"$work/err"
  echo "status $?" >>"$work/out"
  sed "s|$2|$3|g" "$work/err" >>"$work/out"
  cat "$work/out"
}
n=0 bad=0
while read -r t; do
  if ! cmp -s <(events "$old" "$t" "$t") <(events "$new" "$t" "$t"); then
    echo "differs: $t" >&2
    bad=$((bad + 1))
  fi
  n=$((n + 1))
done < <(find . -name '*.iopred.zst' -not -path './.git/*' -not -path './build/*' | sort)
echo "$n traces, $bad differ"
if [ -n "$copies" ]; then
  m=0
  for c in "$copies"/*.iopred.zst; do
    t=./$(basename "$c" | sed 's|__|/|g')
    if ! cmp -s <(events "$old" "$t" TRACE | sed 's/at byte [0-9]*/at byte N/') \
      <(events "$new" "$c" TRACE | sed 's/at byte [0-9]*/at byte N/'); then
      echo "differs: $t and its copy $c" >&2
      bad=$((bad + 1))
    fi
    m=$((m + 1))
  done
  echo "$m copies compared"
fi
[ "$bad" -eq 0 ]
