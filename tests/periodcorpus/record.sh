#!/bin/bash
# Re-records iopred's period corpus: real programs run under build/libiopred.so,
# their traces kept in runs/NAME/ and their labels in labels.tsv (run, class,
# period_s, bursts, file). period_s is the period the program was given (a
# deadline loop's), or 0 when only the program knows it (LAMMPS's dumps, the
# IOR-like job's checkpoints): the test then measures it from the trace as the
# mean interval between the starts of the BURSTS write bursts to FILE.
# The last column, half, puts each run in the half the verdict is tuned on
# ("tune") or the half that judges it ("held"), split by program and seed.
# usage: tests/periodcorpus/record.sh [NAME_PATTERN]   (from the repository root,
# after make; needs lmp, fio, mpicc, h5copy, h5import, sqlite3, make, gcc, python3)
# A deadline loop keeps its period only if it gets a core when it wakes: on a
# shared machine record with RECORD_NICE=-10 (as root), so that other users'
# niced work does not delay it; each run's load average before and after, and
# the nice level, go to recorded.tsv.
set -euo pipefail
. "$(dirname "$0")/recordlib.sh"

# half NAME: the half a run belongs to: odd-numbered programs and seeds tune,
# even ones judge; of the three LAMMPS and IOR runs, one each tunes.
half() {
  case $1 in
    ckpt1|ckpt3|ckpt5|ckpt7|ckpt9|ckpt11|h5a|h5c|lammps100|ior250) echo tune ;;
    pool1|pool3|pool5|random1|random3|random5|fio1|fio3|make1|tar1|sort1|sqlite1|sqlite3) echo tune ;;
    *) echo held ;;
  esac
}


w=$here/workload.py
# Periodic: checkpoint loops at several periods, sizes, jitters and loads.
i=0
for spec in "0.1 1048576 40 0 0" "0.2 262144 30 0 0" "0.3 4194304 25 0.1 0" "0.5 1048576 24 0 1" \
            "0.75 262144 20 0.2 0" "1.0 8388608 16 0 0" "0.25 65536 30 0.2 1" "0.4 2097152 25 0.05 0" \
            "1.5 1048576 12 0.1 0" "0.15 524288 40 0.1 1" "0.6 16777216 20 0 0" "2.0 4194304 10 0.05 0"; do
  set -- $spec
  i=$((i+1))
  run ckpt$i periodic $1 $3 ckpt.dat $5 $py $w ckpt . $1 $2 $3 $4 $i
done
# HDF5 checkpoints: h5copy writes a dataset of 1 or 8 MiB to a new file.
mkdir -p "$work/h5src"
for mib in 1 8; do
  head -c $((mib << 20)) /dev/urandom > "$work/h5src/raw$mib"
  printf 'PATH dset\nINPUT-CLASS IN\nINPUT-SIZE 32\nRANK 1\nDIMENSION-SIZES %d\nOUTPUT-CLASS IN\nOUTPUT-SIZE 32\n' $((mib << 18)) > "$work/h5src/conf$mib"
  h5import "$work/h5src/raw$mib" -c "$work/h5src/conf$mib" -o "$work/h5src/src$mib.h5"
done
run h5a periodic 0.5 20 .h5 0 $py $w h5 . 0.5 "$work/h5src/src1.h5" 20 0 1
run h5b periodic 1.0 15 .h5 0 $py $w h5 . 1.0 "$work/h5src/src8.h5" 15 0.1 2
run h5c periodic 0.8 18 .h5 1 $py $w h5 . 0.8 "$work/h5src/src1.h5" 18 0.05 3
run h5d periodic 1.2 12 .h5 0 $py $w h5 . 1.2 "$work/h5src/src8.h5" 12 0.2 4
# LAMMPS: a melting LJ liquid dumping every atom every 50 or 100 steps.
input=$root/tests/predict/testdata/melt.lmp
for spec in "lammps50 50 2000 0" "lammps100 100 3000 0" "lammps50load 50 2000 1"; do
  set -- $spec
  sed -e "s/dump            snapshots all atom 50/dump            snapshots all atom $2/" -e "s/^run .*/run             $3/" "$input" > "$work/$1.lmp"
  run $1 periodic 0 $(($3 / $2 + 1)) snapshots.dump $4 lmp -in "$work/$1.lmp" -var out . -log none -screen none
done
# The IOR-like MPI-IO job of tests/mpi: checkpoints of N-1 strided writes.
mpicc -O2 -o "$work/ior" "$root/tests/mpi/testdata/ior.c"
run ior100 periodic 0 30 ckpt.dat 0 mpirun --oversubscribe -np 2 "$work/ior" . 3 65536 16384 100 ckpt=30
run ior250 periodic 0 25 ckpt.dat 0 mpirun --oversubscribe -np 2 "$work/ior" . 4 262144 65536 250 ckpt=25
run ior150load periodic 0 30 ckpt.dat 1 mpirun --oversubscribe -np 2 "$work/ior" . 3 65536 16384 150 ckpt=30

# Not periodic.
for s in 1 2 3 4 5; do run pool$s aperiodic 0 0 - 0 $py $w pool . 8 $s; done
for spec in "1 0.3" "2 0.5" "3 0.2" "4 0.8" "5 0.4"; do
  set -- $spec
  run random$1 aperiodic 0 0 - 0 $py $w random . 10 $2 $1
done
run fio1 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=16m --rw=randrw --rwmixread=70 --bs=4k --rate_iops=300 --rate_process=poisson --runtime=6 --time_based --randseed=1
run fio2 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=16m --rw=randrw --rwmixread=30 --bsrange=4k-256k --rate_iops=100 --rate_process=poisson --runtime=6 --time_based --randseed=2
run fio3 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=8m --rw=randwrite --bs=16k --rate_iops=200 --rate_process=poisson --runtime=6 --time_based --randseed=3 --fsync=8
run fio4 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=8m --rw=randrw --bs=8k --runtime=3 --time_based --randseed=4
# make -j2 compiling 24 small C files.
mkdir -p "$work/src"
for j in $(seq 1 24); do printf 'int f%d(int x) { int s = 0; for (int i = 0; i < x * %d; i++) s += i %% 7; return s; }\n' $j $j > "$work/src/f$j.c"; done
printf 'OBJ := $(patsubst %%.c,%%.o,$(wildcard $(SRC)/*.c))\nall: libf.a\nlibf.a: $(notdir $(OBJ))\n\tar rcs $@ $^\n%%.o: $(SRC)/%%.c\n\tgcc -O2 -c -o $@ $<\n' > "$work/src/Makefile"
run make1 aperiodic 0 0 - 0 make -j2 -f "$work/src/Makefile" SRC="$work/src"
run make2 aperiodic 0 0 - 1 make -j2 -f "$work/src/Makefile" SRC="$work/src"
# tar and sort on files made beforehand (untraced).
mkdir -p "$work/tree"
for j in $(seq 1 200); do head -c $(( (j * 7919) % 300000 + 1000 )) /dev/urandom > "$work/tree/file$j"; done
run tar1 aperiodic 0 0 - 0 tar czf out.tgz -C "$work" tree
run tar2 aperiodic 0 0 - 0 tar cf out.tar -C "$work" tree
$py -c 'import random
r = random.Random(7)
with open("'"$work"'/lines", "w") as f:
    for i in range(400000): f.write("%016x %d\n" % (r.getrandbits(64), i))'
run sort1 aperiodic 0 0 - 0 sort -S 1M -T . -o sorted "$work/lines"
run sort2 aperiodic 0 0 - 0 sort -S 4M --parallel=2 -T . -k2 -n -o sorted "$work/lines"
# SQLite: transactions of random sizes.
for s in 1 2 3; do
  $py -c 'import random, sys
r = random.Random('$s')
print("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);")
for i in range(50):
    print("BEGIN;")
    for j in range(r.randint(1, 80)): print("INSERT INTO t(v) VALUES(randomblob(%d));" % r.randint(10, 8000))
    if r.random() < 0.3: print("DELETE FROM t WHERE id %% %d = 0;" % r.randint(2, 9))
    print("COMMIT;")' > "$work/sql$s"
  run sqlite$s aperiodic 0 0 - 0 sh -c "sqlite3 db.sqlite < $work/sql$s"
done
# A job whose checkpoint interval changes part-way (not in labels.tsv: the
# phase example of `iopred period`).
if [ -z "$only" ] || [[ phases == $only ]]; then
  rm -rf "$here/phases"; mkdir -p "$here/phases" "$work/phases"
  (cd "$work/phases" && env LD_PRELOAD="$lib" IOPRED_DIR="$here/phases" IOPRED_PREDICT=0 $py $w phases . 0.25 40 0.8 15 1048576 1)
fi
echo "recorded in $here/runs" >&2
