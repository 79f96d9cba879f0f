#!/bin/bash
# Records the period corpus's fresh held-out set (labels.tsv, half "fresh"):
# runs recorded after the verdict was last changed, to judge it on data that
# tuned nothing. Most come from generators the tuning and held-out halves do
# not use:
#   - shell loops: dd writes a checkpoint and fsyncs it, then sleep; the
#     period is the sleep plus the checkpoint's time (no deadline: the phase
#     drifts), each checkpoint a new process;
#   - Python steps: a fixed amount of computation between checkpoints (the
#     period is whatever the CPU makes of it, as for a simulation);
#   - LAMMPS at other dump intervals, the IOR-like job at other pauses;
#   - not periodic: dd bursts after random sleeps from a shell, fio mixes,
#     SQLite, gzip, cp, make with other sources, and workload.py's pool and
#     random bursts at new seeds.
# Labels as record.sh's (period 0: measured from the trace as the mean
# interval between the starts of BURSTS write bursts to FILE).
# With FRESH_HALF=fresh2 it records a second such set at other periods,
# sizes and seeds (names ending in b), for a change made after looking at
# the first.
# usage: tests/periodcorpus/record_fresh.sh [NAME_PATTERN]  (from the
# repository root after make; RECORD_NICE=-10 as root on a shared machine)
set -euo pipefail
. "$(dirname "$0")/recordlib.sh"
set=${FRESH_HALF:-fresh}
# pick FIRST SECOND: the first set's value, or the second's.
pick() { if [ "$set" = fresh ]; then echo "$1"; else echo "$2"; fi; }

half() { echo "$set"; }

# FRESH_HALF=fresh5: a fifth set, recorded before any verdict on it was
# looked at, while a second null model for the clock (the job's own gaps
# in random order) was tried and then not kept; it judges f390e78's
# verdict with the clock's cycles per interval (MaxCyclesPerInterval),
# made after it was recorded, from generators no earlier set uses: a bash while loop of dd
# with oflag=dsync and sleep, a C program computing a fixed amount, then
# checkpointing and resting with a relative nanosleep
# (testdata/stepckpt.c), Python threads each re-arming its own
# threading.Timer, an asyncio task checkpointing beside a computing one
# (a CPU hog beside it), and Python checkpoints on a deadline beside a
# thread appending log lines at random times; not periodic: bash sleeps
# from $RANDOM, Python writes at gamma-distributed gaps, perl writes at
# log-normal gaps, and the C program resting uniformly 0.05 to 0.6 s.
if [ "$set" = fresh5 ]; then
  gcc -O2 -o "$work/stepckpt" "$here/testdata/stepckpt.c"
  run shwhile5 periodic 0 30 ckpt.dat 0 bash -c 'i=0; while [ $i -lt 30 ]; do dd if=/dev/zero of=ckpt.dat bs=512k count=2 oflag=dsync status=none; sleep 0.35; i=$((i+1)); done'
  run cstep5 periodic 0 25 ckpt.dat 0 "$work/stepckpt" ckpt.dat 25 262144 4 20 0.2 0 71
  run pythreads5 periodic 0 20 a.dat 0 $py -c "
import os, threading
done = threading.Event()
def every(name, size, left):
    fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, bytes(size), 0)
    os.fsync(fd)
    os.close(fd)
    if left > 1:
        threading.Timer(0.5, every, (name, size, left - 1)).start()
    elif name == 'a.dat':
        done.set()
threading.Timer(0.5, every, ('a.dat', 1048576, 20)).start()
threading.Timer(0.6, every, ('b.dat', 262144, 20)).start()
done.wait()
"
  run pyasync5 periodic 0 25 ckpt.dat 1 $py -c "
import asyncio, os
async def checkpoint():
    for c in range(25):
        await asyncio.sleep(0.3)
        fd = os.open('ckpt.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, bytes(1048576))
        os.fsync(fd)
        os.close(fd)
async def compute(stop):
    s = 0
    while not stop.done():
        for k in range(20000):
            s += k
        await asyncio.sleep(0)
async def main():
    ck = asyncio.ensure_future(checkpoint())
    await asyncio.gather(ck, compute(ck))
asyncio.run(main())
"
  run bgwriter5 periodic 0.4 25 ckpt.dat 0 $py -c "
import os, random, threading, time
stop = threading.Event()
def logger():
    r = random.Random(83)
    fd = os.open('log.dat', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    while not stop.wait(r.expovariate(1 / 0.15)):
        os.write(fd, b'x' * r.randint(200, 8000))
    os.close(fd)
t = threading.Thread(target=logger)
t.start()
deadline = time.monotonic()
for c in range(25):
    deadline += 0.4
    time.sleep(max(0, deadline - time.monotonic()))
    fd = os.open('ckpt.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for k in range(8):
        os.write(fd, bytes(262144))
    os.fsync(fd)
    os.close(fd)
stop.set()
t.join()
"
  run bashrand5 aperiodic 0 0 - 0 bash -c 'RANDOM=73; i=0; while [ $i -lt 30 ]; do sleep 0.$((RANDOM % 9 + 1)); dd if=/dev/zero of=out.dat bs=128k count=$((RANDOM % 8 + 1)) oflag=append conv=notrunc,fdatasync status=none; i=$((i+1)); done'
  run pygamma5 aperiodic 0 0 - 0 $py -c "
import os, random, time
r = random.Random(89)
fd = os.open('out.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for c in range(35):
    time.sleep(r.gammavariate(3, 0.35 / 3))
    os.write(fd, bytes(131072 * r.randint(1, 8)))
    os.fsync(fd)
os.close(fd)
"
  run perllognorm5 aperiodic 0 0 - 0 perl -e 'use Time::HiRes qw(sleep); srand(97); my $b = "r" x 262144; open(my $f, ">", "out.dat") or die; for my $c (1..35) { my $z = sqrt(-2 * log(1 - rand())) * cos(6.283185307 * rand()); sleep(0.3 * exp(0.5 * $z)); syswrite($f, $b) for 1..1 + int(rand(3)); } close($f)'
  run crand5 aperiodic 0 0 - 0 "$work/stepckpt" out.dat 35 262144 4 5 0.05 0.6 101
  exit 0
fi

# FRESH_HALF=fresh4: a fourth set, recorded after the clock's null model
# kept the job's clusters (judging it and everything before unseen), from
# generators no earlier set uses: a C program computing on its main thread
# and checkpointing with pwrite on absolute deadlines with jitter
# (testdata/timerckpt.c), the same with a 3 s stall mid-run (the clock
# resumes), Python checkpoints from a SIGALRM interval timer, gawk and
# perl loops (write, then sleep); not periodic: the C program at
# exponential gaps, Python appends at Poisson times, dd on a schedule of
# uniform random times drawn beforehand, perl writing in clusters at
# Poisson times, gawk writing after random sleeps.
if [ "$set" = fresh4 ]; then
  gcc -O2 -o "$work/timerckpt" "$here/testdata/timerckpt.c" -lm
  run cpwrite4 periodic 0.35 30 ckpt.dat 0 "$work/timerckpt" ckpt.dat 0.35 30 131072 4 0.15 41
  run stall4 periodic 0.3 30 ckpt.dat 0 "$work/timerckpt" ckpt.dat 0.3 30 262144 2 0 43 15 3.0
  run pyitimer4 periodic 0.4 20 ckpt.dat 1 $py -c "
import os, signal
ticks = 0
def tick(sig, frame):
    global ticks
    ticks += 1
signal.signal(signal.SIGALRM, tick)
signal.setitimer(signal.ITIMER_REAL, 0.4, 0.4)
fd = os.open('ckpt.dat', os.O_WRONLY | os.O_CREAT, 0o644)
done, s = 0, 0
while done < 20:
    s += 1
    if ticks > done:
        done += 1
        for k in range(4):
            os.pwrite(fd, bytes(262144), k * 262144)
        os.fsync(fd)
signal.setitimer(signal.ITIMER_REAL, 0)
os.close(fd)
"
  run awkloop4 periodic 0 25 ckpt.dat 0 gawk 'BEGIN { line = sprintf("%0100d", 0); for (i = 0; i < 25; i++) { for (j = 0; j < 3000; j++) print line > "ckpt.dat"; close("ckpt.dat"); system("sleep 0.3") } }'
  run perlloop4 periodic 0 20 ckpt.dat 0 perl -e 'use Time::HiRes qw(sleep); my $b = "p" x 524288; for my $i (1..20) { open(my $f, ">", "ckpt.dat") or die; syswrite($f, $b) for 1..2; close($f); sleep(0.45) }'
  run cpoisson4 aperiodic 0 0 - 0 "$work/timerckpt" out.dat 0 40 131072 2 0.25 47
  run pypoisson4 aperiodic 0 0 - 0 $py -c "
import os, random, time
r = random.Random(53)
fd = os.open('out.dat', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for c in range(40):
    time.sleep(r.expovariate(1 / 0.3))
    os.write(fd, bytes(65536))
os.close(fd)
"
  sched=$($py -c "import random; r = random.Random(59); t = sorted(r.uniform(0, 12) for _ in range(30)); print(' '.join('%.3f:%d' % (b - a, r.randint(1, 8)) for a, b in zip([0] + t, t)))")
  run ddsched4 aperiodic 0 0 - 0 sh -c "for p in $sched; do sleep \${p%:*}; dd if=/dev/zero of=sched.dat bs=256k count=\${p#*:} conv=fdatasync status=none; done"
  run perlcluster4 aperiodic 0 0 - 0 perl -e 'use Time::HiRes qw(sleep); srand(61); my $b = "q" x 131072; open(my $f, ">", "out.dat") or die; for my $c (1..14) { sleep(-log(1 - rand()) * 0.9); for (1..1 + int(rand(5))) { syswrite($f, $b); sleep(-log(1 - rand()) * 0.08) } } close($f)'
  run awkrand4 aperiodic 0 0 - 0 gawk 'BEGIN { srand(67); line = sprintf("%0100d", 0); for (i = 0; i < 30; i++) { system("sleep " (0.05 + rand() * 0.9)); n = 200 + int(rand() * 4000); for (j = 0; j < n; j++) print line > "out.dat"; fflush("out.dat") } }'
  exit 0
fi

# FRESH_HALF=fresh3: a third set, recorded after the stream test, the
# steady part, the smaller spread and the joined shares were made (judging
# them unseen), from generators neither earlier set uses: Python
# checkpoints on a wall-clock deadline and from a timer thread beside a
# computing main thread, dd copying a file and tar czf, periodically (programs that read, then
# write, every period: the stream test must leave them periodic); not
# periodic: Python writes of random sizes at log-normal gaps and in random
# clusters, gzip and sort on a large file, cat over many files.
if [ "$set" = fresh3 ]; then
  run pyclock3 periodic 0 30 ckpt.dat 0 $py -c "
import os, time
deadline, s = time.monotonic(), 0
for c in range(30):
    deadline += 0.3
    while time.monotonic() < deadline - 0.05:
        s += 1
    time.sleep(max(0, deadline - time.monotonic()))
    fd = os.open('ckpt.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for k in range(4):
        os.write(fd, bytes(262144))
    os.fsync(fd)
    os.close(fd)
"
  run pythread3 periodic 0 20 ckpt.dat 1 $py -c "
import os, threading
stop = threading.Event()
def writer():
    for c in range(20):
        stop.wait(0.45)
        fd = os.open('ckpt.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, bytes(2097152))
        os.fsync(fd)
        os.close(fd)
t = threading.Thread(target=writer)
t.start()
s = 0
while t.is_alive():
    s += 1
"
  run copyloop3 periodic 0 25 ckpt.dat 0 sh -c "head -c 2097152 /dev/zero > src.dat; for i in \$(seq 25); do dd if=src.dat of=ckpt.dat bs=256k conv=fsync status=none; sleep 0.25; done"
  run tarloop3 periodic 0 20 ckpt.tgz 0 sh -c "mkdir -p tree; for f in 1 2 3 4 5 6 7 8; do head -c 200000 /dev/urandom > tree/\$f; done; for i in \$(seq 20); do tar czf ckpt.tgz tree; sleep 0.4; done"
  run pyrand3 aperiodic 0 0 - 0 $py -c "
import os, random, time
r = random.Random(31)
fd = os.open('out.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for c in range(35):
    time.sleep(min(2.0, r.lognormvariate(-1.3, 0.8)))
    os.write(fd, bytes(65536 * r.randint(1, 32)))
    os.fsync(fd)
os.close(fd)
"
  run pycluster3 aperiodic 0 0 - 0 $py -c "
import os, random, time
r = random.Random(37)
fd = os.open('out.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for c in range(12):
    time.sleep(r.uniform(0.2, 1.5))
    for k in range(r.randint(1, 6)):
        os.write(fd, bytes(131072))
        os.fsync(fd)
        time.sleep(r.uniform(0.01, 0.15))
os.close(fd)
"
  head -c 60000000 /dev/urandom | base64 > "$work/big.txt"
  run gzipbig3 aperiodic 0 0 - 0 sh -c "gzip -c $work/big.txt > big.gz"
  run sortbig3 aperiodic 0 0 - 0 sort -S 2M -T . -o sorted.txt "$work/big.txt"
  run catmany3 aperiodic 0 0 - 0 sh -c "find /usr/share/doc -type f -print0 | head -z -n 3000 | xargs -0 cat > all.txt"
  exit 0
fi

# Periodic: shell loops (sleep after each checkpoint).
for spec in $(pick "shloop1:0.2:30:4:0 shloop2:0.5:20:16:0 shloop3:1.0:12:8:1 shloop4:0.35:25:1:0" \
                   "shloop1b:0.3:25:2:0 shloop2b:0.7:16:12:1 shloop3b:0.15:40:1:0"); do
  spec=${spec//:/ }
  set -- $spec
  run $1 periodic 0 $3 ckpt.dat $5 sh -c "for i in \$(seq $3); do dd if=/dev/zero of=ckpt.dat bs=256k count=$4 conv=fsync status=none; sleep $2; done"
done
# Python steps: N rounds of arithmetic between checkpoints.
for spec in $(pick "pystep1:600000:30:1048576:0 pystep2:1500000:16:4194304:0 pystep3:1000000:24:262144:1" \
                   "pystep1b:800000:25:2097152:1 pystep2b:400000:30:524288:0"); do
  spec=${spec//:/ }
  set -- $spec
  run $1 periodic 0 $3 ckpt.dat $5 $py -c "
import os
s = 0
for c in range($3):
    for i in range($2):
        s += i * i % 7
    fd = os.open('ckpt.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for k in range(max(1, $4 // 262144)):
        os.write(fd, bytes(min($4, 262144)))
    os.fsync(fd)
    os.close(fd)
"
done
# LAMMPS at other dump intervals.
input=$root/tests/predict/testdata/melt.lmp
for spec in $(pick "lammps20:20:1000:0 lammps75:75:3000:0 lammps150load:150:4500:1" "lammps40b:40:1600:0 lammps120loadb:120:3600:1"); do
  spec=${spec//:/ }
  set -- $spec
  sed -e "s/dump            snapshots all atom 50/dump            snapshots all atom $2/" -e "s/^run .*/run             $3/" "$input" > "$work/$1.lmp"
  run $1 periodic 0 $(($3 / $2 + 1)) snapshots.dump $4 lmp -in "$work/$1.lmp" -var out . -log none -screen none
done
# The IOR-like MPI-IO job at other pauses and sizes.
mpicc -O2 -o "$work/ior" "$root/tests/mpi/testdata/ior.c"
if [ "$set" = fresh ]; then
  run ior200 periodic 0 20 ckpt.dat 0 mpirun --oversubscribe -np 2 "$work/ior" . 2 131072 32768 200 ckpt=20
  run ior60load periodic 0 40 ckpt.dat 1 mpirun --oversubscribe -np 2 "$work/ior" . 2 65536 65536 60 ckpt=40
else
  run ior300b periodic 0 16 ckpt.dat 0 mpirun --oversubscribe -np 2 "$work/ior" . 3 262144 65536 300 ckpt=16
fi

# Not periodic: dd bursts after random sleeps (exponential, drawn beforehand).
for s in $(pick "1 2" "3 4"); do
  sleeps=$($py -c "import random; r = random.Random($s + 100); print(' '.join('%.3f:%d' % (r.expovariate(1 / 0.4), r.randint(1, 24)) for _ in range(30)))")
  run shrand$s aperiodic 0 0 - 0 sh -c "for p in $sleeps; do sleep \${p%:*}; dd if=/dev/zero of=burst.dat bs=128k count=\${p#*:} conv=fsync status=none; done"
done
for s in $(pick "6 7" "8"); do run pool$s aperiodic 0 0 - 0 $py "$here/workload.py" pool . 8 $s; done
if [ "$set" = fresh ]; then
run random6 aperiodic 0 0 - 0 $py "$here/workload.py" random . 10 0.25 6
run random7 aperiodic 0 0 - 0 $py "$here/workload.py" random . 12 0.6 7
else
run random8 aperiodic 0 0 - 0 $py "$here/workload.py" random . 10 0.35 8
run fio7 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=16m --rw=randwrite --bssplit=8k/60:256k/40 --rate_iops=60 --rate_process=poisson --runtime=6 --time_based --randseed=7 --fsync=2
run sqlite6 aperiodic 0 0 - 0 sh -c "sqlite3 db.sqlite 'CREATE TABLE t(v); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20000) INSERT INTO t SELECT randomblob(abs(random()) % 3000) FROM c; DELETE FROM t WHERE rowid % 3 = 0; VACUUM;'"
fi
[ "$set" = fresh ] || { echo "recorded in $here/runs" >&2; exit 0; }
run fio5 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=16m --rw=randwrite --bssplit=4k/50:64k/30:1m/20 --rate_iops=80 --rate_process=poisson --runtime=6 --time_based --randseed=5 --fsync=4
run fio6 aperiodic 0 0 - 0 fio --name=mix --filename=fio.dat --size=8m --rw=randrw --rwmixread=50 --bs=32k --rate_iops=150 --rate_process=poisson --runtime=5 --time_based --randseed=6
for s in 4 5; do
  $py -c 'import random
r = random.Random('$s')
print("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);")
for i in range(60):
    print("BEGIN;")
    for j in range(r.randint(1, 120)): print("INSERT INTO t(v) VALUES(randomblob(%d));" % r.randint(10, 12000))
    if r.random() < 0.4: print("UPDATE t SET v = randomblob(%d) WHERE id %% %d = 0;" % (r.randint(10, 500), r.randint(2, 9)))
    print("COMMIT;")' > "$work/sql$s"
  run sqlite$s aperiodic 0 0 - 0 sh -c "sqlite3 db.sqlite < $work/sql$s"
done
mkdir -p "$work/tree"
for j in $(seq 1 150); do head -c $(( (j * 104729) % 400000 + 500 )) /dev/urandom > "$work/tree/f$j"; done
run gzip1 aperiodic 0 0 - 0 sh -c "cp -r $work/tree t && gzip -r t"
run cp1 aperiodic 0 0 - 0 cp -r "$work/tree" copy
mkdir -p "$work/src"
for j in $(seq 1 30); do printf 'double g%d(double x) { double s = 0; for (int i = 0; i < %d; i++) s += x / (i + 1); return s; }\n' $j $((j * 1000)) > "$work/src/g$j.c"; done
printf 'OBJ := $(patsubst %%.c,%%.o,$(wildcard $(SRC)/*.c))\nall: libg.so\nlibg.so: $(notdir $(OBJ))\n\tgcc -shared -o $@ $^\n%%.o: $(SRC)/%%.c\n\tgcc -O1 -fPIC -c -o $@ $<\n' > "$work/src/Makefile"
run make3 aperiodic 0 0 - 0 make -j2 -f "$work/src/Makefile" SRC="$work/src"
echo "recorded in $here/runs" >&2
