# A Python pool of 4 forked workers: each task writes its own file in
# 64 KiB chunks through one descriptor, then reads it back, so that the
# workers' descriptors share numbers and their calls interleave in time.
import multiprocessing as mp
import os
import sys

DATA = sys.argv[1]
CHUNK = 65536
CHUNKS = 16


def task(i):
    path = os.path.join(DATA, "part_%d.bin" % i)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    buf = bytes([i % 256]) * CHUNK
    for _ in range(CHUNKS):
        os.write(fd, buf)
    os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    n = 0
    while True:
        b = os.read(fd, CHUNK)
        if not b:
            break
        n += len(b)
    os.close(fd)
    return n


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(4) as pool:
        sizes = pool.map(task, range(8), chunksize=1)
    assert sizes == [CHUNK * CHUNKS] * 8, sizes
    print("ok", sum(sizes))
