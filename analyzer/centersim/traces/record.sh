#!/usr/bin/env bash
# Records the client-side traces that the center simulator's built-in
# target applications replay (go:embed in ../traces.go): the project's
# IOR-like MPI-IO workload, LAMMPS writing snapshots, and fio writing
# checkpoints in bursts and reading them back. Each is a real run traced
# by build/libiopred.so; the simulator keeps only its burst structure
# (when each burst starts and ends, how many bytes it reads and writes)
# and scales it to a center's job. Kept small: a few tens of KB each.
#
# usage: record.sh          (from anywhere; needs make, mpicc, mpirun, lmp, fio)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
make -C "$root" lib >/dev/null
lib="$root/build/libiopred.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

fresh() { rm -rf "$here/$1"; mkdir -p "$here/$1" "$work/$1"; }

# The IOR-like job: 4 ranks; the four phases (N-1 independent, N-1
# collective, N-N, read back) of 3 segments of 64 KiB in 16 KiB calls, then
# 12 checkpoints, 200 ms of "compute" between them.
fresh ior
mpicc.openmpi -O2 -o "$work/ior.bin" "$root/tests/mpi/testdata/ior.c"
mpirun.openmpi --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x IOPRED_DIR="$here/ior" -x IOPRED_JOB=0 \
	"$work/ior.bin" "$work/ior" 3 65536 16384 200 ckpt=12

# LAMMPS: the melt example (4000 atoms), a snapshot of every atom every
# 50 steps for 1000 steps.
fresh lammps
sed 's/^run .*/run             1000/' "$root/tests/predict/testdata/melt.lmp" > "$work/melt.lmp"
(cd "$work/lammps" && LD_PRELOAD="$lib" IOPRED_DIR="$here/lammps" IOPRED_JOB=0 \
	lmp -in "$work/melt.lmp" -var out "$work/lammps" -log none -screen none)

# fio: a checkpointing job writing 8 MiB bursts with 250 ms of think time
# between them, and a job reading its input at the start; --thread so
# that the jobs are threads of the traced process.
fresh fio
(cd "$work/fio" && LD_PRELOAD="$lib" IOPRED_DIR="$here/fio" fio --thread --output=/dev/null \
	--name=ckpt --directory="$work/fio" --rw=write --bs=1m --size=96m --thinktime=250ms --thinktime_blocks=8 \
	--name=input --directory="$work/fio" --rw=read --bs=1m --size=32m)
# lmp starts Open MPI's singleton daemon, which is traced too: keep the
# program's own trace only.
rm -f "$here"/lammps/orted.*
du -sh "$here"/ior "$here"/lammps "$here"/fio
