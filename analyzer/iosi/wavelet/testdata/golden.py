#!/usr/bin/python3
"""Regenerates golden.json, the reference values wavelet_test.go checks
the Go transform against, with Debian's python3-pywt and python3-scipy.

Usage: golden.py [OUT]   (default: golden.json beside this script)

It writes:
  pywt_dmey    pywt's tabulated discrete Meyer decomposition low-pass filter
  meyer_dmey   the Meyer scaling filter h[k] = phi(k/2)/sqrt(2), k = -31..30,
               integrated by scipy.integrate.quad from the scaling function's
               Fourier transform and scaled to sum to sqrt(2)
  cases        fixed inputs with pywt.wavedec / waverec results in
               "symmetric" mode, for both filter banks
"""
import json
import math
import os
import sys

import numpy as np
import pywt
from scipy.integrate import quad


def nu(x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    return x**4 * (35 - 84 * x + 70 * x * x - 20 * x**3)


def phihat(w):
    w = abs(w)
    if w <= 2 * math.pi / 3:
        return 1.0
    if w >= 4 * math.pi / 3:
        return 0.0
    return math.cos(math.pi / 2 * nu(3 * w / (2 * math.pi) - 1))


def meyer_tap(k):
    flat = math.pi / 3 if k == 0 else math.sin(k * math.pi / 3) / k
    band = quad(lambda w: phihat(2 * w) * math.cos(k * w), math.pi / 3,
                2 * math.pi / 3, epsabs=1e-15, epsrel=1e-13, limit=400)[0]
    return math.sqrt(2) / math.pi * (flat + band)


def meyer_filter(n=62):
    h = [meyer_tap(i - n // 2) for i in range(n)]
    s = sum(h)
    return [v * math.sqrt(2) / s for v in h]


def signal(n, seed):
    """A deterministic burst-like test signal: a few rectangular bursts,
    a slow wave and pseudo-random jitter from a fixed generator."""
    rng = np.random.RandomState(seed)
    t = np.arange(n)
    x = 0.3 + 0.2 * np.sin(2 * math.pi * t / max(n / 3, 1))
    for c in rng.randint(0, max(n, 1), size=3):
        x[c:c + max(n // 20, 1)] += 2.0 + rng.rand()
    x += 0.1 * rng.rand(n)
    return x


def bank(lo):
    w = pywt.Wavelet("dmey")
    if lo is None:
        return w
    rec_lo = lo[::-1]
    dec_hi = [(-1) ** (k + 1) * rec_lo[k] for k in range(len(lo))]
    rec_hi = dec_hi[::-1]
    return pywt.Wavelet("meyer", filter_bank=[lo, dec_hi, rec_lo, rec_hi])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "golden.json")
    meyer = meyer_filter()
    g = {"pywt": pywt.__version__,
         "pywt_dmey": list(pywt.Wavelet("dmey").dec_lo),
         "meyer_dmey": meyer,
         "cases": []}
    for n, seed in [(1, 1), (5, 2), (37, 3), (64, 4), (129, 5), (200, 6)]:
        x = signal(n, seed)
        case = {"n": n, "x": x.tolist(), "banks": {}}
        for name, lo in [("pywt", None), ("meyer", meyer)]:
            w = bank(lo)
            per = {}
            for level in (1, 2, 3):
                c = pywt.wavedec(x, w, mode="symmetric", level=level)
                zero = [c[0]] + [np.zeros_like(d) for d in c[1:]]
                per[str(level)] = {
                    "approx": pywt.waverec(zero, w, mode="symmetric")[:n].tolist(),
                }
                if lo is None:
                    per[str(level)]["wavedec"] = [a.tolist() for a in c]
                    per[str(level)]["waverec"] = pywt.waverec(
                        c, w, mode="symmetric").tolist()
            case["banks"][name] = per
        g["cases"].append(case)
    with open(out, "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    main()
