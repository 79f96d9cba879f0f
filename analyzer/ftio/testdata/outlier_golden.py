#!/usr/bin/python3
"""Regenerates outlier_golden.json: FTIO's outlier detectors (v0.0.9,
ftio/analysis/anomaly_detection.py) on the spectra of fixed signals, run
with Debian's scikit-learn and SciPy and FTIO's parameters, which
outlier_test.go checks iopred's detectors against.

The spectrum is FTIO's power spectrum: p_k = 2|X_k|^2/N for k = 1..N/2,
as shares of their sum; the points are (f_k / f_{N/2}, p_k). Recorded per
signal and detector: the bins found outlying (0-based, k-1) and, for
DBSCAN and LOF, each bin's confidence; for the isolation forest the
outlying bins under several seeds (its answers are random).

Usage: outlier_golden.py [OUT]   (default: outlier_golden.json beside this script)
"""
import json
import os
import sys

import numpy as np
import scipy
import sklearn
from scipy.signal import find_peaks
from sklearn.cluster import DBSCAN
from sklearn.ensemble import IsolationForest
from sklearn.neighbors import LocalOutlierFactor

TOL = 0.8
FS = 10.0


def signals():
    rng = np.random.RandomState(26)
    n = 600
    t = np.arange(n)
    bursts = np.where(t % 25 < 3, 5e8, 0.0) * (1 + 0.2 * rng.rand(n))
    yield "bursts25", bursts
    two = np.where(t % 40 < 4, 3e8, 0.0) + np.where(t % 14 < 2, 2e8, 0.0)
    yield "two_periods", two + 1e6 * rng.rand(n)
    rand = np.zeros(n)
    for s in rng.randint(0, n - 5, 30):
        rand[s:s + rng.randint(1, 5)] += 4e8 * rng.rand()
    yield "random_bursts", rand
    yield "sine_noise", 1e8 * (1 + np.sin(2 * np.pi * t / 33.0)) + 5e7 * rng.rand(n)
    yield "noise", 1e8 * rng.rand(n)
    m = 1000
    jit = np.zeros(m)
    s = 5
    while s < m - 4:
        jit[s:s + 3] = 6e8
        s += 47 + rng.randint(-3, 4)
    yield "jitter47", jit + 1e6 * rng.rand(m)


def spectrum(x):
    n = len(x)
    amp = np.abs(np.fft.fft(x))
    amp = amp * amp / n  # FTIO's psd
    half = np.arange(1, n // 2 + 1)
    p = 2 * amp[half]
    freq = FS * np.arange(n) / n
    f = freq[half]
    return np.vstack((f / f.max(), p / p.sum())).T


def norm_conf(c):
    lo, hi = c.min(), c.max()
    if lo == hi:
        return np.zeros_like(c)
    if lo == 0:
        return 1 - c / hi
    return (hi - c) / (hi - lo)


def ftio_dominant(idx, n):
    """FTIO's harmonic removal and verdict on outlying bins (0-based):
    walking up, a bin whose frequency modulo a kept one's is below 1e-5 Hz
    is a harmonic; more than two kept means no period. Returns bins k."""
    freq = FS * np.arange(0, n) / n
    kept = []
    for k in (i + 1 for i in idx):
        if not any(freq[k] % freq[c] < 0.00001 for c in kept):
            kept.append(k)
    return kept if len(kept) <= 2 else []


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "outlier_golden.json")
    g = {"sklearn": sklearn.__version__, "scipy": scipy.__version__, "fs": FS, "tol": TOL, "cases": []}
    for name, x in signals():
        d = spectrum(x)
        c = {"name": name, "signal": x.tolist()}
        eps = np.sqrt(((d[:, 1].max() - d[:, 1].min()) * (1 - TOL)) ** 2 + (d[1, 0] - d[0, 0]) ** 2)
        labels = DBSCAN(eps=eps, min_samples=2).fit(d).labels_
        c["dbscan"] = np.flatnonzero(labels == -1).tolist()
        c["dbscan_conf"] = (d[:, 1] / d[:, 1].max()).tolist()
        pk, _ = find_peaks(d[:, 1], height=TOL * d[:, 1].max())
        c["peaks"] = pk.tolist()
        lof = LocalOutlierFactor(contamination=0.001, novelty=True).fit(d)
        dec = lof.decision_function(d)
        c["lof"] = np.flatnonzero(lof.predict(d) == -1).tolist()
        c["lof_conf"] = norm_conf(dec).tolist()
        c["isoforest"] = []
        for seed in range(5):
            f = IsolationForest(contamination=0.001, warm_start=True, random_state=seed).fit(d)
            c["isoforest"].append(np.flatnonzero(f.predict(d) == -1).tolist())
        # The forest's expected scores, nearly free of its randomness.
        big = IsolationForest(n_estimators=4000, random_state=0).fit(d)
        c["isoforest_scores_4000"] = big.score_samples(d).tolist()
        c["dominant"] = {m: ftio_dominant(c[m], len(x)) for m in ("dbscan", "peaks", "lof")}
        g["cases"].append(c)
    with open(out, "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
