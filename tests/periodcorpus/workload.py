"""Workloads of iopred's period corpus (tests/periodcorpus), one per call:

  workload.py ckpt DIR PERIOD BYTES COUNT JITTER SEED   checkpoint loop: every PERIOD s
      (deadlines from the start, each moved by up to JITTER*PERIOD either way) writes
      BYTES to DIR/ckpt.dat in 256 KiB writes and fsyncs it
  workload.py h5 DIR PERIOD SRC COUNT JITTER SEED        the same deadlines, each running
      h5copy to copy SRC's dataset into the checkpoint file DIR/ckpt<i>.h5
  workload.py phases DIR P1 N1 P2 N2 BYTES SEED          N1 checkpoints every P1 s, then N2
      every P2 s (a job whose checkpoint interval changes part-way)
  workload.py pool DIR SECONDS SEED                      4 forked workers writing and reading
      files of random sizes after random pauses (no rhythm)
  workload.py random DIR SECONDS MEAN SEED               bursts of random size at exponential
      intervals of mean MEAN s
"""
import os
import random
import subprocess
import sys
import time

CHUNK = 256 << 10


def write_file(path, size, rng):
    block = bytes(rng.getrandbits(8) for _ in range(64)) * (CHUNK // 64)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    left = size
    while left > 0:
        n = min(left, CHUNK)
        os.write(fd, block[:n])
        left -= n
    os.fsync(fd)
    os.close(fd)


def deadlines(period, count, jitter, rng):
    start = time.monotonic()
    for i in range(count):
        t = start + i * period + rng.uniform(-jitter, jitter) * period
        now = time.monotonic()
        if t > now:
            time.sleep(t - now)
        yield i


def main():
    kind, d = sys.argv[1], sys.argv[2]
    if kind == "ckpt":
        period, size, count, jitter, seed = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
        rng = random.Random(seed)
        for _ in deadlines(period, count, jitter, rng):
            write_file(os.path.join(d, "ckpt.dat"), size, rng)
    elif kind == "phases":
        p1, n1, p2, n2, size, seed = float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
        rng = random.Random(seed)
        for period, count in ((p1, n1), (p2, n2)):
            for _ in deadlines(period, count, 0, rng):
                write_file(os.path.join(d, "ckpt.dat"), size, rng)
    elif kind == "h5":
        period, src, count, jitter, seed = float(sys.argv[3]), sys.argv[4], int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
        rng = random.Random(seed)
        for i in deadlines(period, count, jitter, rng):
            out = os.path.join(d, "ckpt%d.h5" % i)
            subprocess.run(["h5copy", "-i", src, "-o", out, "-s", "/dset", "-d", "/dset"], check=True)
    elif kind == "pool":
        seconds, seed = float(sys.argv[3]), int(sys.argv[4])
        pids = []
        for w in range(4):
            pid = os.fork()
            if pid == 0:
                rng = random.Random(seed * 10 + w)
                end = time.monotonic() + seconds
                i = 0
                while time.monotonic() < end:
                    time.sleep(rng.expovariate(1 / rng.choice([0.02, 0.1, 0.4])))
                    p = os.path.join(d, "w%d.%d" % (w, i % 5))
                    write_file(p, rng.randint(4 << 10, 3 << 20), rng)
                    q = os.path.join(d, "w%d.%d" % (w, rng.randrange(i + 1) % 5))
                    if os.path.exists(q):
                        with open(q, "rb") as f:
                            while f.read(CHUNK):
                                pass
                    i += 1
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
    elif kind == "random":
        seconds, mean, seed = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
        rng = random.Random(seed)
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            time.sleep(rng.expovariate(1 / mean))
            write_file(os.path.join(d, "burst%d.dat" % (i % 3)), rng.randint(16 << 10, 4 << 20), rng)
            i += 1
    else:
        sys.exit("unknown workload " + kind)


main()
