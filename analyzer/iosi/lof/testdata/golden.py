#!/usr/bin/python3
"""Regenerates golden.json, scikit-learn's LocalOutlierFactor on fixed
point sets, which lof_test.go checks Scores against (and Novelty against
novelty=True's scores of the training points).

Usage: golden.py [OUT]   (default: golden.json beside this script)
"""
import json
import os
import sys

import numpy as np
import sklearn
from sklearn.neighbors import LocalOutlierFactor


def sets():
    rng = np.random.RandomState(14)
    # IOSI-like: run time and volume of 12 runs, two of them skewed.
    runs = np.column_stack([1500 + 40 * rng.randn(12), 640 + 20 * rng.randn(12)])
    runs[3] = [2400, 900]
    runs[8] = [1510, 1300]
    yield "runs", runs
    yield "uniform", rng.rand(30, 2)
    yield "clusters", np.vstack([rng.randn(20, 2), 6 + 0.5 * rng.randn(15, 2), [[20, -4]]])
    yield "line3d", np.column_stack([np.arange(9.0), 2 * np.arange(9.0) + 0.01 * rng.rand(9), rng.rand(9)])
    yield "pair", np.array([[0.0, 0.0], [1.0, 2.0]])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "golden.json")
    g = {"sklearn": sklearn.__version__, "cases": []}
    for name, x in sets():
        for k in (1, 2, 5, 20):
            lof = LocalOutlierFactor(n_neighbors=k, algorithm="brute").fit(x)
            nov = LocalOutlierFactor(n_neighbors=k, algorithm="brute", novelty=True).fit(x)
            g["cases"].append({"name": name, "k": k, "points": x.tolist(),
                               "lof": (-lof.negative_outlier_factor_).tolist(),
                               "novelty": (-nov.score_samples(x)).tolist()})
    with open(out, "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    main()
