"""A Python analysis loop reading a file at a stride, with NumPy work on
each piece, in one of two ways:

  readinto: seek and readinto a NumPy buffer (read(2) underneath);
  memmap:   slices of a numpy.memmap (page faults, no read calls at all).

pystride.py MODE FILE READS SIZE STRIDE COMPUTE_US
prints a checksum of the values read, and on stderr the loop's time and
the names of the process's threads."""
import os
import sys
import time

import numpy as np

mode, path = sys.argv[1], sys.argv[2]
reads, size, stride, compute_us = (int(a) for a in sys.argv[3:7])

def work(a, us):
    # Computation between reads: NumPy work for about us microseconds.
    end = time.perf_counter() + us / 1e6
    x = 0.0
    while time.perf_counter() < end:
        x += float(np.sin(a[:256].astype(np.float64)).sum())
    return x

total = np.uint64(0)
t0 = time.perf_counter()
if mode == "readinto":
    buf = np.empty(size, dtype=np.uint8)
    with open(path, "rb", buffering=0) as f:
        for i in range(reads):
            f.seek(i * stride)
            n = f.readinto(buf)
            total += np.uint64(buf[:n:512].astype(np.uint64).sum())
            work(buf[:n], compute_us)
elif mode == "memmap":
    m = np.memmap(path, dtype=np.uint8, mode="r")
    for i in range(reads):
        piece = np.array(m[i * stride:i * stride + size])
        total += np.uint64(piece[::512].astype(np.uint64).sum())
        work(piece, compute_us)
else:
    sys.exit("mode must be readinto or memmap")
elapsed = time.perf_counter() - t0
print("sum", int(total))
print("time %.6f" % elapsed, file=sys.stderr)
# The names of the process's threads (the tests look for the library's
# fadvise thread).
names = []
for tid in sorted(os.listdir("/proc/self/task")):
    try:
        with open("/proc/self/task/%s/comm" % tid) as f:
            names.append(f.read().strip())
    except OSError:
        pass
print("tasks " + " ".join(names), file=sys.stderr)
