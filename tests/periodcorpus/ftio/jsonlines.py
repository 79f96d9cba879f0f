# Stand-in for PyPI's jsonlines (not in Debian), as far as FTIO's JSON lines
# reader uses it: open(path, "r") as a context manager iterating the parsed
# objects of the file's non-empty lines.
import builtins
import json


class _Reader:
    def __init__(self, path):
        self._f = builtins.open(path, "r", encoding="utf-8")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __iter__(self):
        for line in self._f:
            if line.strip():
                yield json.loads(line)


def open(path, mode="r"):  # noqa: A001 (the module's own name)
    if mode != "r":
        raise NotImplementedError("jsonlines stand-in: read only")
    return _Reader(path)
