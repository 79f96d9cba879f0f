#!/usr/bin/env python3
"""Regenerates the expected figures of the Darshan logs kept in
tests/interop/darshan from Darshan's own readers, darshan-parser and
darshan-dxt-parser (libdarshan-util, built from darshan-hpc/darshan; see
tests/interop/README.md). The tests compare iopred's figures with the files
this writes; they never run the readers themselves (no network, no build of
Darshan in CI).

usage: regen.py [DARSHAN_BIN_DIR]   (default: the directory of darshan-parser on PATH)

For each log it writes reference/<log name>.json:
  job          darshan-parser's header: exe, uid, jobid, nprocs, start_time,
               end_time, run time (as it prints it), log version, lib_ver
  modules      the module regions the header lists
  counters     per module: records, and the sum over records of every integer
               counter (exact, wrapped to 64 bits, to prove every value decoded)
  application  the job's bytes each counted once, from darshan-parser's values:
               a file's MPI-IO record when it has one, else its POSIX records,
               plus its STDIO records
  dxt          per DXT module: segments, and their summed lengths
  heatmap      per heatmap (POSIX, MPIIO, STDIO): bin width, bins, summed bytes
  lustre       per file: stripe size, stripe count, OST ids
"""
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.dirname(HERE)


def run(tool, log):
    env = dict(os.environ)
    lib = os.path.join(os.path.dirname(os.path.dirname(tool)), "lib")
    env["LD_LIBRARY_PATH"] = lib + ":" + env.get("LD_LIBRARY_PATH", "")
    out = subprocess.run([tool, log], capture_output=True, env=env, check=True)
    return out.stdout.decode("utf-8", "replace")


def integer(v):
    try:
        return int(v)
    except ValueError:
        return None


def parse(text):
    job, modules, meta = {}, [], {}
    counters = defaultdict(lambda: defaultdict(int))
    records = defaultdict(set)
    per_file = defaultdict(lambda: defaultdict(lambda: [0, 0]))  # path -> module -> [read, written]
    heat = defaultdict(lambda: {"bin_width_seconds": None, "bins": 0, "bytes_read": 0, "bytes_written": 0})
    lustre = defaultdict(lambda: {"stripe_size": None, "stripe_count": None, "osts": []})
    for line in text.splitlines():
        if line.startswith("#"):
            body = line[1:].strip()
            for key in ("exe", "uid", "jobid", "start_time", "end_time", "nprocs", "run time", "darshan log version"):
                if body.startswith(key + ": "):
                    job[key.replace(" ", "_")] = body[len(key) + 2:]
            if body.startswith("metadata: lib_ver = "):
                meta["lib_ver"] = body[len("metadata: lib_ver = "):]
            if " module: " in body and "bytes (compressed)" in body:
                modules.append(body.split(" module: ")[0])
            continue
        f = line.split("\t")
        if len(f) < 6:
            continue
        mod, rank, rec, name, value, path = f[:6]
        records[mod].add((rank, rec))
        n = integer(value)
        if mod == "HEATMAP":
            h = heat[path.replace("heatmap:", "")]
            if name == "HEATMAP_F_BIN_WIDTH_SECONDS":
                h["bin_width_seconds"] = float(value)
            elif name.startswith("HEATMAP_READ_BIN_"):
                h["bins"] = max(h["bins"], int(name.rsplit("_", 1)[1]) + 1)
                h["bytes_read"] += n
            elif name.startswith("HEATMAP_WRITE_BIN_"):
                h["bytes_written"] += n
            continue
        if mod == "LUSTRE":
            l = lustre[path]
            if name in ("LUSTRE_STRIPE_SIZE", "LUSTRE_COMP1_STRIPE_SIZE"):
                l["stripe_size"] = n
            elif name in ("LUSTRE_STRIPE_WIDTH", "LUSTRE_COMP1_STRIPE_COUNT"):
                l["stripe_count"] = n
            elif name.startswith("LUSTRE_OST_ID_") or name.startswith("LUSTRE_COMP1_OST_ID_"):
                l["osts"].append(n)
        if n is not None and not name.startswith("HEATMAP"):
            counters[mod][name] += n
        prefix = {"POSIX": "POSIX_", "MPI-IO": "MPIIO_", "STDIO": "STDIO_"}.get(mod)
        if prefix and name in (prefix + "BYTES_READ", prefix + "BYTES_WRITTEN"):
            per_file[path][mod][0 if name.endswith("READ") else 1] += n
    app = [0, 0]
    for path, mods in per_file.items():
        use = ["MPI-IO"] if "MPI-IO" in mods else ["POSIX"]
        for m in use + ["STDIO"]:
            if m in mods:
                app[0] += mods[m][0]
                app[1] += mods[m][1]
    out_counters = {}
    for mod, sums in counters.items():
        # Sums wrap as 64-bit integers do, as the tests' sums in Go do.
        wrapped = {k: (v + 2**63) % 2**64 - 2**63 for k, v in sums.items()}
        out_counters[mod] = {"records": len(records[mod]), "sums": dict(sorted(wrapped.items()))}
    job["lib_ver"] = meta.get("lib_ver", "")
    return {"job": job, "modules": modules, "counters": out_counters,
            "application": {"bytes_read": app[0], "bytes_written": app[1]},
            "heatmap": dict(heat), "lustre": dict(sorted(lustre.items()))}


def parse_dxt(text):
    dxt = defaultdict(lambda: {"segments": 0, "bytes": 0})
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] in ("X_POSIX", "X_MPIIO"):
            d = dxt["DXT_" + f[0][2:]]
            d["segments"] += 1
            d["bytes"] += int(f[5])
    return dict(dxt)


def main():
    if len(sys.argv) > 1:
        bindir = sys.argv[1]
    else:
        p = shutil.which("darshan-parser")
        if not p:
            sys.exit("regen.py: darshan-parser not found: give the bin directory of a libdarshan-util build")
        bindir = os.path.dirname(p)
    parser = os.path.join(bindir, "darshan-parser")
    dxt_parser = os.path.join(bindir, "darshan-dxt-parser")
    version = subprocess.run([parser, "--help"], capture_output=True).stderr.decode(errors="replace")
    for sub in sorted(os.listdir(LOGS)):
        d = os.path.join(LOGS, sub)
        if not os.path.isdir(d) or sub == "reference":
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".darshan"):
                continue
            log = os.path.join(d, name)
            ref = parse(run(parser, log))
            ref["dxt"] = parse_dxt(run(dxt_parser, log))
            ref["log"] = sub + "/" + name
            ref["reader"] = "darshan-parser and darshan-dxt-parser (libdarshan-util)"
            path = os.path.join(HERE, name[: -len(".darshan")] + ".json")
            with open(path, "w") as fh:
                json.dump(ref, fh, indent=1, sort_keys=True)
                fh.write("\n")
            print(path)


if __name__ == "__main__":
    main()
