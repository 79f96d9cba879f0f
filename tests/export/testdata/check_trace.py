#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON document the way a reader of the format
sees it, with Python's json module only, and prints its counts as JSON.

Usage: check_trace.py TRACE.json

Rules checked (the trace-event format, as Perfetto's JSON importer and
chrome://tracing read it):
  - the document is an object with a traceEvents array;
  - every event has a string ph among X (complete), i (instant) and M
    (metadata), a non-empty name, and integer pid and tid;
  - X has numeric ts and dur >= 0; i has numeric ts >= 0 and scope t or p;
  - M is process_name or thread_name with args.name a string, or a
    *_sort_index with an integer args.sort_index;
  - every process with events has a process_name, every (pid, tid) with
    slices a thread_name;
  - on each (pid, tid) track the slices nest: a slice that starts inside
    another ends inside it (times compared in integer nanoseconds, as the
    document writes them to three decimals of a microsecond).
Exit status 1 with the first violations on stderr.
"""
import json
import sys
from decimal import Decimal


def ns(v):
    return int(Decimal(str(v)) * 1000)


def main(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    errors = []
    events = doc["traceEvents"]
    names = {}
    tracks = {}
    counts = {"slices": 0, "instants": 0, "predictions": 0, "metadata": 0,
              "bytes_read": 0, "bytes_write": 0, "processes": 0, "threads": 0}
    for i, e in enumerate(events):
        ph, name = e.get("ph"), e.get("name")
        pid, tid = e.get("pid"), e.get("tid")
        if not isinstance(name, str) or not name or type(pid) is not int or type(tid) is not int:
            errors.append(f"event {i}: name {name!r} pid {pid!r} tid {tid!r}")
            continue
        if ph == "X":
            ts, dur = e.get("ts"), e.get("dur")
            if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) or ts < 0 or dur < 0:
                errors.append(f"slice {i}: ts {ts!r} dur {dur!r}")
                continue
            counts["slices"] += 1
            args = e.get("args", {})
            if args.get("dir") in ("read", "write"):
                counts["bytes_" + args["dir"]] += args["bytes"]
            tracks.setdefault((pid, tid), []).append((ns(ts), ns(dur), name))
        elif ph == "i":
            ts = e.get("ts")
            if not isinstance(ts, (int, float)) or ts < 0 or e.get("s") not in ("t", "p"):
                errors.append(f"instant {i}: ts {ts!r} scope {e.get('s')!r}")
            counts["instants"] += 1
            if e.get("cat") == "prediction":
                counts["predictions"] += 1
        elif ph == "M":
            args = e.get("args", {})
            if name in ("process_name", "thread_name"):
                if not isinstance(args.get("name"), str):
                    errors.append(f"metadata {i}: args {args!r}")
                names[(name, pid, tid if name == "thread_name" else 0)] = args.get("name")
            elif name.endswith("_sort_index"):
                if type(args.get("sort_index")) is not int:
                    errors.append(f"metadata {i}: args {args!r}")
            else:
                errors.append(f"metadata {i}: unknown {name!r}")
            counts["metadata"] += 1
        else:
            errors.append(f"event {i}: phase {ph!r}")
    for (pid, tid), slices in tracks.items():
        if ("process_name", pid, 0) not in names:
            errors.append(f"process {pid} has no process_name")
        if ("thread_name", pid, tid) not in names:
            errors.append(f"track {pid}/{tid} has no thread_name")
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for ts, dur, name in slices:
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and ts + dur > stack[-1]:
                errors.append(f"track {pid}/{tid}: {name} at {ts} ns ends at {ts + dur} ns, after its enclosing slice ({stack[-1]} ns)")
            stack.append(ts + dur)
    counts["processes"] = len({k[1] for k in names if k[0] == "process_name"})
    counts["threads"] = len(tracks)
    if errors:
        print("\n".join(errors[:20]), file=sys.stderr)
        sys.exit(1)
    json.dump(counts, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
