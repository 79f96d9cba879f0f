#!/usr/bin/env python3
"""An independent decoder of Darshan logs, for the Go reader's tests.

Written apart from the Go reader, with the standard library only (struct,
zlib, bz2): it decompresses each region whole and picks the few counters it
sums by their positions in each module version's record, then prints the
job facts and per-module totals as JSON. The Go test compares them with
what the Go reader finds.

    darshan_ref.py LOG...               print each log's totals, one JSON
                                        object per line
    darshan_ref.py --variants DIR LOG...
                                        write DIR/MODE-<name of LOG> for
                                        every LOG and MODE:
        bzip2   regions recompressed with bzip2 (two streams each)
        none    regions stored uncompressed
        zlib2   regions recompressed with zlib (two streams each)
        swap    byte order swapped (modules other than POSIX, MPI-IO,
                STDIO and DXT are dropped), recompressed with zlib
"""
import bz2
import json
import os
import struct
import sys
import zlib

MAGIC = 6567223

# The module slots of the header, by log format version.
SLOTS = {
    "3.00": {"POSIX": 1, "MPI-IO": 2, "STDIO": 7, "DXT_POSIX": 8, "DXT_MPIIO": 9},
    "3.10": {"POSIX": 1, "MPI-IO": 2, "STDIO": 7, "DXT_POSIX": 8, "DXT_MPIIO": 9},
    "3.20": {"POSIX": 1, "MPI-IO": 2, "STDIO": 8, "DXT_POSIX": 9, "DXT_MPIIO": 10},
    "3.21": {"POSIX": 1, "MPI-IO": 2, "STDIO": 8, "DXT_POSIX": 9, "DXT_MPIIO": 10},
    "3.41": {"POSIX": 1, "MPI-IO": 2, "STDIO": 9, "DXT_POSIX": 10, "DXT_MPIIO": 11},
}

# Per module version: how many int64 and double counters a record holds,
# and where the counters summed below sit (floats counted from the first
# double).
LAYOUT = {
    ("POSIX", 1): dict(ints=68, floats=15, opens=0, reads=1, writes=2, bytes_read=13, bytes_written=14, read_time=6, write_time=7, meta_time=8),
    ("POSIX", 2): dict(ints=64, floats=15, opens=0, reads=1, writes=2, bytes_read=9, bytes_written=10, read_time=6, write_time=7, meta_time=8),
    ("POSIX", 3): dict(ints=64, floats=17, opens=0, reads=1, writes=2, bytes_read=9, bytes_written=10, read_time=8, write_time=9, meta_time=10),
    ("POSIX", 4): dict(ints=69, floats=17, opens=0, reads=3, writes=4, bytes_read=14, bytes_written=15, read_time=8, write_time=9, meta_time=10),
    ("MPI-IO", 1): dict(ints=51, floats=15, opens=(0, 1), reads=(2, 4), writes=(3, 5), bytes_read=14, bytes_written=15, read_time=6, write_time=7, meta_time=8),
    ("MPI-IO", 2): dict(ints=51, floats=15, opens=(0, 1), reads=(2, 4), writes=(3, 5), bytes_read=14, bytes_written=15, read_time=6, write_time=7, meta_time=8),
    ("MPI-IO", 3): dict(ints=51, floats=17, opens=(0, 1), reads=(2, 4), writes=(3, 5), bytes_read=14, bytes_written=15, read_time=8, write_time=9, meta_time=10),
    ("STDIO", 1): dict(ints=13, floats=15, opens=0, reads=1, writes=2, bytes_read=6, bytes_written=5, read_time=2, write_time=1, meta_time=0),
    ("STDIO", 2): dict(ints=14, floats=15, opens=0, reads=2, writes=3, bytes_read=7, bytes_written=6, read_time=2, write_time=1, meta_time=0),
}


def inflate(data, comp):
    """The decompressed content of a region: every stream in it."""
    if comp == 2:
        return data
    if comp == 1:
        return bz2.decompress(data) if data else b""
    out = []
    while data:
        d = zlib.decompressobj()
        out.append(d.decompress(data))
        if not d.eof:
            raise ValueError("zlib stream cut short")
        data = d.unused_data
    return b"".join(out)


def parse(raw):
    version = raw[:8].split(b"\0")[0].decode()
    new = version == "3.41"
    nslots = 64 if new else 16
    for order in "<>":
        if struct.unpack(order + "q", raw[8:16])[0] == MAGIC:
            break
    else:
        raise ValueError("bad magic")
    comp = raw[16]
    if new:
        partial = struct.unpack(order + "Q", raw[24:32])[0]
        base = 32
    else:
        partial = struct.unpack(order + "I", raw[20:24])[0]
        base = 24
    maps = struct.unpack(order + "%dQ" % (2 + 2 * nslots), raw[base:base + 16 * (1 + nslots)])
    vers = struct.unpack(order + "%dI" % nslots, raw[base + 16 * (1 + nslots):base + 16 * (1 + nslots) + 4 * nslots])
    hsize = base + 16 * (1 + nslots) + 4 * nslots
    name_map = (maps[0], maps[1])
    mods = {i: (maps[2 + 2 * i], maps[3 + 2 * i], vers[i]) for i in range(nslots) if maps[3 + 2 * i]}
    return dict(version=version, order=order, comp=comp, partial=partial, hsize=hsize, name_map=name_map, mods=mods)


def job_end(h, size):
    if h["name_map"][0]:
        return h["name_map"][0]
    offs = [off for off, n, v in h["mods"].values() if off > h["hsize"]]
    return min(offs) if offs else size


def totals(path):
    raw = open(path, "rb").read()
    h = parse(raw)
    o, ver = h["order"], h["version"]
    job = inflate(raw[h["hsize"]:job_end(h, len(raw))], h["comp"])
    if ver == "3.41":
        uid, ss, sn, es, en, nprocs, jobid = struct.unpack(o + "7q", job[:56])
        trailer = job[56 + 1024:]
    else:
        uid, ss, es, nprocs, jobid = struct.unpack(o + "5q", job[:40])
        sn = en = 0
        trailer = job[40 + 1024:]
    exe = trailer.split(b"\0")[0].split(b"\n")[0].decode("utf-8", "replace")
    out = dict(version=ver, big_endian=o == ">", compression=h["comp"],
               job=dict(uid=uid, jobid=jobid, nprocs=nprocs, start_sec=ss, start_nsec=sn, end_sec=es, end_nsec=en, exe=exe),
               modules={})
    names = {}
    if h["name_map"][1]:
        data = inflate(raw[h["name_map"][0]:sum(h["name_map"])], h["comp"])
        i = 0
        while i < len(data):
            rid = struct.unpack(o + "Q", data[i:i + 8])[0]
            if ver == "3.00":
                n = struct.unpack(o + "I", data[i + 8:i + 12])[0]
                name = data[i + 12:i + 12 + n]
                i += 12 + n
            else:
                end = data.index(b"\0", i + 8)
                name = data[i + 8:end]
                i = end + 1
            names.setdefault(rid, name)
    out["names"] = len(names)
    slots = SLOTS[ver]
    for mod, slot in slots.items():
        if slot not in h["mods"]:
            continue
        off, n, mver = h["mods"][slot]
        data = inflate(raw[off:off + n], h["comp"])
        t = dict(version=mver, partial=bool(h["partial"] >> slot & 1))
        if mod.startswith("DXT"):
            seg = 40 if (mod == "DXT_POSIX" and mver >= 2) or (mod == "DXT_MPIIO" and mver >= 3) else 32
            t.update(records=0, write_segments=0, read_segments=0, bytes_written=0, bytes_read=0, ranks=set())
            i = 0
            while i < len(data):
                rid, rank = struct.unpack(o + "Qq", data[i:i + 16])
                nw, nr = struct.unpack(o + "qq", data[i + 88:i + 104])
                i += 104
                for k in range(nw + nr):
                    length = struct.unpack(o + "q", data[i + 8:i + 16])[0]
                    t["bytes_written" if k < nw else "bytes_read"] += length
                    i += seg
                t["records"] += 1
                t["write_segments"] += nw
                t["read_segments"] += nr
                t["ranks"].add(rank)
            t["ranks"] = sorted(t["ranks"])
        else:
            lay = LAYOUT[(mod, mver)]
            size = 16 + 8 * (lay["ints"] + lay["floats"])
            if len(data) % size:
                raise ValueError("%s region is not a whole number of records" % mod)
            keys = ("opens", "reads", "writes", "bytes_read", "bytes_written")
            t.update(records=len(data) // size, shared=0, read_time=0.0, write_time=0.0, meta_time=0.0)
            t.update({k: 0 for k in keys})
            for i in range(0, len(data), size):
                rec = data[i:i + size]
                rank = struct.unpack(o + "q", rec[8:16])[0]
                ints = struct.unpack(o + "%dq" % lay["ints"], rec[16:16 + 8 * lay["ints"]])
                floats = struct.unpack(o + "%dd" % lay["floats"], rec[16 + 8 * lay["ints"]:])
                t["shared"] += rank == -1
                for k in keys:
                    idx = lay[k] if isinstance(lay[k], tuple) else (lay[k],)
                    t[k] += sum(ints[j] for j in idx)
                for k in ("read_time", "write_time", "meta_time"):
                    t[k] += floats[lay[k]]
        out["modules"][mod] = t
    return out


def recompress(data, comp, streams):
    if comp == 2:
        return data
    cut = len(data) // 2 if streams == 2 and len(data) > 1 else len(data)
    parts = [p for p in (data[:cut], data[cut:]) if p]
    if comp == 1:
        return b"".join(bz2.compress(p) for p in parts)
    return b"".join(zlib.compress(p) for p in parts)


def swap8(data):
    return b"".join(data[i:i + 8][::-1] for i in range(0, len(data), 8))


def swapped_region(kind, data, h, mver):
    """The region's content in the other byte order."""
    o = h["order"]
    if kind == "job":
        words = 7 if h["version"] == "3.41" else 5
        return swap8(data[:8 * words]) + data[8 * words:]
    if kind == "names":
        out, i = [], 0
        while i < len(data):
            out.append(data[i:i + 8][::-1])
            if h["version"] == "3.00":
                n = struct.unpack(o + "I", data[i + 8:i + 12])[0]
                out.append(data[i + 8:i + 12][::-1] + data[i + 12:i + 12 + n])
                i += 12 + n
            else:
                end = data.index(b"\0", i + 8)
                out.append(data[i + 8:end + 1])
                i = end + 1
        return b"".join(out)
    if kind.startswith("DXT"):
        seg = 40 if (kind == "DXT_POSIX" and mver >= 2) or (kind == "DXT_MPIIO" and mver >= 3) else 32
        out, i = [], 0
        while i < len(data):
            nw, nr = struct.unpack(o + "qq", data[i + 88:i + 104])
            out.append(swap8(data[i:i + 24]) + data[i + 24:i + 88] + swap8(data[i + 88:i + 104]))
            i += 104
            out.append(swap8(data[i:i + seg * (nw + nr)]))
            i += seg * (nw + nr)
        return b"".join(out)
    return swap8(data)  # counter records: every field is 8 bytes wide


def variant(path, dest, mode):
    raw = open(path, "rb").read()
    h = parse(raw)
    o = h["order"]
    comp = {"bzip2": 1, "none": 2, "zlib2": 0, "swap": 0}[mode]
    streams = 1 if mode == "swap" else 2
    keep = {slot: mod for mod, slot in SLOTS[h["version"]].items()}
    regions = [("job", h["hsize"], job_end(h, len(raw)) - h["hsize"], 0, None)]
    if h["name_map"][1]:
        regions.append(("names", h["name_map"][0], h["name_map"][1], 0, None))
    for slot in sorted(h["mods"]):
        off, n, mver = h["mods"][slot]
        if mode == "swap" and slot not in keep:
            continue
        regions.append((keep.get(slot, "other"), off, n, mver, slot))
    body, pos, maps = [], h["hsize"], {}
    for kind, off, n, mver, slot in regions:
        data = inflate(raw[off:off + n], h["comp"])
        if mode == "swap":
            data = swapped_region(kind, data, h, mver)
        packed = recompress(data, comp, streams)
        maps[slot if kind not in ("job", "names") else kind] = (pos, len(packed), mver)
        body.append(packed)
        pos += len(packed)
    out_order = {"<": ">", ">": "<"}[o] if mode == "swap" else o
    new = h["version"] == "3.41"
    nslots = 64 if new else 16
    hdr = bytearray(raw[:8])
    hdr += struct.pack(out_order + "q", MAGIC)
    hdr += bytes([comp]) + b"\0" * 7 if new else bytes([comp]) + b"\0" * 3
    partial = h["partial"] if mode != "swap" else sum(1 << s for s in keep if h["partial"] >> s & 1)
    hdr += struct.pack(out_order + ("Q" if new else "I"), partial)
    name = maps.get("names", (0, 0, 0))
    fields = [name[0], name[1]]
    vers = []
    for slot in range(nslots):
        m = maps.get(slot)
        fields += [m[0], m[1]] if m else [0, 0]
        vers.append(m[2] if m else 0)
    hdr += struct.pack(out_order + "%dQ" % len(fields), *fields)
    hdr += struct.pack(out_order + "%dI" % nslots, *vers)
    assert len(hdr) == h["hsize"]
    open(dest, "wb").write(bytes(hdr) + b"".join(body))


if __name__ == "__main__":
    if sys.argv[1] == "--variants":
        for log in sys.argv[3:]:
            for mode in ("bzip2", "none", "zlib2", "swap"):
                variant(log, os.path.join(sys.argv[2], mode + "-" + os.path.basename(log)), mode)
    else:
        for log in sys.argv[1:]:
            print(json.dumps(totals(log)))
