"""Finding and loading libnormjit.so.

The package is pure Python: it talks to the C API (include/normjit/normjit.h) through ctypes,
so it works with any installed PyTorch without being compiled against it. This module only
finds the shared library; the C declarations live in _capi.py.
"""
import ctypes
import ctypes.util
import glob
import os

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_REPO_BUILD_LIBRARY = os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..", "build", "libnormjit.so"))


class LibraryNotFound(OSError):
    """libnormjit could not be loaded from any of the places looked at."""


def candidate_paths():
    """The places looked at, in order, as (description, path-or-name) pairs.

    NORMJIT_LIBRARY wins outright (a deliberate choice should never be silently overridden),
    then a copy installed next to the package, then the repository's build folder (running
    from a checkout), then whatever the system loader finds.
    """
    env = os.environ.get("NORMJIT_LIBRARY")
    if env:
        return [("NORMJIT_LIBRARY", env)]
    out = []
    # Newest-looking first: libnormjit.so, then versioned names (libnormjit.so.0, .so.0.1.0).
    beside = sorted(glob.glob(os.path.join(_PACKAGE_DIR, "libnormjit.so*")), key=len)
    out += [("next to the package", p) for p in beside]
    if not beside:
        out.append(("next to the package", os.path.join(_PACKAGE_DIR, "libnormjit.so")))
    out.append(("the repository's build folder", _REPO_BUILD_LIBRARY))
    found = ctypes.util.find_library("normjit")
    out.append(("the system loader", found or "libnormjit.so"))
    return out


def load_library():
    """Returns a ctypes.CDLL for libnormjit, or raises LibraryNotFound naming every place tried."""
    tried = []
    for where, path in candidate_paths():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (where, path))
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s: %s (%s)" % (where, path, e))
    raise LibraryNotFound(
        "normjit: could not load libnormjit.so. Looked at:\n  " + "\n  ".join(tried) +
        "\nBuild it (scripts/build.sh) and set NORMJIT_LIBRARY=/path/to/libnormjit.so, "
        "or copy libnormjit.so* next to the normjit package.")
