# Sourced by record.sh and record_fresh.sh, which define half NAME (the set
# a run's label names). Takes the script's first argument as the pattern of
# the runs to record.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/tests/periodcorpus
lib=$root/build/libiopred.so
py=/usr/bin/python3
only=${1:-}
[ -f "$lib" ] || { echo "$(basename "$0"): $lib missing: run make first" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
nicelevel=${RECORD_NICE:-0}
[ -f "$here/labels.tsv" ] || printf 'run\tclass\tperiod_s\tbursts\tfile\thalf\n' > "$here/labels.tsv"
[ -f "$here/recorded.tsv" ] || printf 'run\tdate_utc\tload1_before\tload1_after\tnice\n' > "$here/recorded.tsv"

# run NAME CLASS PERIOD BURSTS FILE LOAD CMD...: records one run (LOAD=1: a
# CPU hog runs beside it, untraced); its label replaces any older one of the
# same name, so re-recording one set keeps the others' labels.
run() {
  local name=$1 class=$2 period=$3 bursts=$4 file=$5 load=$6
  shift 6
  if [ -n "$only" ] && [[ $name != $only ]]; then return; fi
  local out=$here/runs/$name data=$work/$name
  rm -rf "$out"; mkdir -p "$out" "$data"
  local hog=
  if [ "$load" = 1 ]; then nice -n "$nicelevel" $py -c 'while True: pass' & hog=$!; fi
  echo "recording $name" >&2
  local before; before=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$data" && nice -n "$nicelevel" env LD_PRELOAD="$lib" IOPRED_DIR="$out" IOPRED_PREDICT=0 \
     OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent= \
     DATA="$data" "$@") > "$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; exit 1; }
  if [ -n "$hog" ]; then kill $hog; wait $hog 2>/dev/null || true; fi
  rm -rf "$data"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$(date -u +%FT%TZ)" "$before" "$(cut -d' ' -f1 /proc/loadavg)" "$nicelevel" >> "$here/recorded.tsv"
  grep -v "^$name	" "$here/labels.tsv" > "$work/labels" || true
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$class" "$period" "$bursts" "$file" "$(half "$name")" >> "$work/labels"
  cp "$work/labels" "$here/labels.tsv"
}
