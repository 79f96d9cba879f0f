#!/usr/bin/python3
"""Regenerates golden.json: scikit-learn's OPTICS on fixed inputs.

Run from this directory: /usr/bin/python3 golden.py > golden.json
The Go test compares its own ordering, core distances, reachability,
predecessors and xi labels with these, and re-runs this script (when
scikit-learn is installed) to check the file is what scikit-learn says.
"""
import json
import math

import numpy as np
from sklearn.cluster import OPTICS


def blobs(rng, centers, n, spread):
    pts = []
    for c in centers:
        pts.append(rng.normal(loc=c, scale=spread, size=(n, 2)))
    return np.vstack(pts)


def cases():
    rng = np.random.RandomState(7)
    yield "three_blobs", blobs(rng, [(0, 0), (5, 5), (0, 6)], 30, 0.4), 5, 0.05
    rng = np.random.RandomState(11)
    x = blobs(rng, [(1, 1), (3, 1)], 25, 0.3)
    yield "blobs_and_noise", np.vstack([x, rng.uniform(-4, 8, size=(20, 2))]), 5, 0.05
    rng = np.random.RandomState(3)
    # bursts in (log10 peak, log10 area): tight groups of different density
    x = np.vstack([blobs(rng, [(10.1, 12.0)], 40, 0.02), blobs(rng, [(9.5, 11.2)], 15, 0.05),
                   rng.uniform([8.5, 10], [10.5, 12.5], size=(25, 2))])
    yield "bursts", x, 5, 0.05
    # exact duplicates and a grid: ties everywhere
    g = np.array([[i, j] for i in range(6) for j in range(6)], dtype=float)
    yield "grid_ties", np.vstack([g, g[:10]]), 4, 0.1
    rng = np.random.RandomState(5)
    yield "nested", np.vstack([blobs(rng, [(0, 0)], 30, 0.1), blobs(rng, [(0.8, 0)], 30, 0.1),
                               blobs(rng, [(8, 8)], 30, 1.0)]), 6, 0.03
    yield "tiny", np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [5.0, 5.0], [5.0, 6.0]]), 2, 0.05


def num(v):
    return None if math.isinf(v) else float(v)


out = []
for name, x, m, xi in cases():
    o = OPTICS(min_samples=m, xi=xi).fit(x)
    out.append({
        "name": name, "min_samples": m, "xi": xi,
        "points": [[float(a), float(b)] for a, b in x],
        "order": [int(i) for i in o.ordering_],
        "core": [num(v) for v in o.core_distances_],
        "reach": [num(v) for v in o.reachability_],
        "predecessor": [int(i) for i in o.predecessor_],
        "labels": [int(i) for i in o.labels_],
    })
print(json.dumps(out, separators=(",", ":")))
