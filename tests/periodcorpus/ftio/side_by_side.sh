#!/bin/bash
# Runs FTIO itself on every run of the period corpus and writes its answers
# to ../ftio_answers.tsv (run, the sampling frequency, FTIO's period in s or
# -, its confidence in % or -; a row per run and sampling frequency), which
# the corpus benchmark prints beside iopred's verdicts. FTIO reads each run's writes as iopred exports them
# (`iopred export --format ftio`, TMIO's JSON lines) with mode write_sync.
# usage: tests/periodcorpus/ftio/side_by_side.sh FTIO_SOURCE [FS_HZ...]
#   FTIO_SOURCE: a checkout of tuda-parallel/FTIO at tag v0.0.9 (its ftio/
#   directory); FS_HZ: FTIO's sampling frequencies, 10 (FTIO's default) and
#   100 (periods down to 0.02 s: the corpus's shortest is 0.1 s) unless given. Needs build/iopred (make) and Debian's python3-numpy, -scipy,
#   -sklearn, -pandas, -plotly, -msgpack, -rich, -zmq, -pywt for
#   /usr/bin/python3; PyPI's kneed, numba, darshan, orjson and fastcluster
#   are absent (run_ftio.py: used only off FTIO's DFT path) and jsonlines
#   is stood in for by jsonlines.py.
set -euo pipefail
src=${1:?usage: side_by_side.sh FTIO_SOURCE [FS_HZ...]}
shift
freqs=${*:-10 100}
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(dirname "$here")
root=$(cd "$corpus/../.." && pwd)
iopred=$root/build/iopred
[ -x "$iopred" ] || { echo "side_by_side.sh: $iopred missing: run make first" >&2; exit 1; }
[ -f "$src/ftio/cli/ftio_core.py" ] || { echo "side_by_side.sh: $src is no FTIO source tree" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$corpus/ftio_answers.tsv
printf 'run\tfs_hz\tftio_period_s\tftio_confidence_pct\n' > "$out.tmp"
names=$(tail -n +2 "$corpus/labels.tsv" | cut -f1)
files=()
for name in $names; do
  "$iopred" export --format ftio -o "$work/$name.jsonl" "$corpus/runs/$name" 2> /dev/null
  files+=("$work/$name.jsonl")
done
for fs in $freqs; do
  echo "FTIO on the corpus at $fs Hz" >&2
  # One Python process for all runs; each answer follows "=== FILE". A run
  # without writes has no write_sync lines, and FTIO fails on it: no period.
  (cd "$work" && PYTHONPATH="$src:$here" /usr/bin/python3 "$here/run_ftio.py" -m write_sync -f "$fs" -e no -- "${files[@]}" 2>&1) |
    awk -v fs="$fs" -v dir="$work/" '
      function emit() { if (name != "") printf "%s\t%s\t%s\t%s\n", name, fs, period, conf }
      /^=== / { emit(); name = substr($2, length(dir) + 1); sub(/\.jsonl$/, "", name); period = "-"; conf = "-"; next }
      /Hz-> .* s/ { for (i = 1; i <= NF; i++) if ($i == "Hz->") period = $(i + 1); next }
      /Confidence:/ { for (i = 1; i <= NF; i++) if ($i == "Confidence:") conf = $(i + 1); next }
      END { emit() }' >> "$out.tmp"
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
