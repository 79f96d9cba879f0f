# Runs FTIO's ftio_core with Debian's Python packages. Debian's PyWavelets
# (1.4) lacks frequency2scale, which only FTIO's wavelet transform uses:
# it is set to raise, so the DFT path (the default) runs unchanged.
import sys
import pywt

ABSENT = ["darshan", "kneed", "numba", "orjson", "fastcluster"]

def _missing(*a, **k):
    raise NotImplementedError("pywt.frequency2scale: PyWavelets too old (wavelets unavailable)")

if not hasattr(pywt, "frequency2scale"):
    pywt.frequency2scale = _missing

# Modules FTIO imports at load time for inputs and features not used here
# (Darshan logs, JIT compilation, DBSCAN's knee, ZMQ input): any use raises.
import types


class _Absent(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"

        def absent(*a, **k):
            raise NotImplementedError(f"{full}: not installed here")

        return absent


for _name in ABSENT:
    if _name not in sys.modules:
        try:
            __import__(_name)
        except ImportError:
            sys.modules[_name] = _Absent(_name)

from ftio.cli.ftio_core import main

if __name__ == "__main__":
    # run_ftio.py [FTIO OPTIONS] -- FILE...: FTIO once per file in this one
    # process (FTIO's imports take seconds), each answer after a line
    # "=== FILE"; without "--", one FTIO run on the command line as given.
    if "--" in sys.argv:
        cut = sys.argv.index("--")
        options, files = sys.argv[1:cut], sys.argv[cut + 1:]
        for f in files:
            print(f"=== {f}", flush=True)
            try:
                main([sys.argv[0], f] + options)
            except Exception as e:  # one file's failure is its answer
                print(f"FTIO failed: {type(e).__name__}: {e}", flush=True)
    else:
        main(sys.argv)
