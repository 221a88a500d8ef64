"""Compiled code kept on disk: a fresh transform of code numba compiled before, in this process or
an earlier one, loads the machine code instead of compiling it again.

numba's own cache (`njit(cache=True)`) keeps machine code beside a function's source file,
keyed by that file's name and time stamp, and loads it in a few milliseconds where compiling
takes 0.1-1 s. Generated code has no file, so here each compiled module's text is written
once to a file named by a hash of everything the compiled code depends on:

* the text itself (the generated functions, fused kernels and all);
* the value of every global it reads, which numba freezes into the machine code as a constant
  (`G = 9.81` at module level): numbers, strings, NumPy scalars and arrays up to 1 MiB by
  value, NumPy and math by name, the attributes read of any other module (`config.K`) by
  value, dualtape's runtime helpers and their compiled twins by the hash of their source
  files;
* the versions of Python, NumPy and numba, and the machine (dualtape's own part is the text
  and the helpers' source).

A global of any other kind (a user function numba compiles alongside, an object) makes the
module uncached: it compiles as before, every time. So a changed constant, helper or version
is a different file, never a stale load.

Where: `$DUALTAPE_JIT_CACHE`, else `$XDG_CACHE_HOME/dualtape/jit` (`~/.cache/dualtape/jit`);
`DUALTAPE_JIT_CACHE=0` turns it off. A directory that cannot be written turns it off too."""

import hashlib
import os
import pathlib
import platform
import sys
import types

import numpy as np

ENV = "DUALTAPE_JIT_CACHE"
OFF = ("0", "off", "false", "no", "")
MAX_ARRAY_BYTES = 2**20
MODULE_PREFIX = "dualtape_jit_"


def directory():
    """The cache directory (created), or None when caching is off or it cannot be written."""
    setting = os.environ.get(ENV)
    if setting is not None and setting.strip().lower() in OFF:
        return None
    if setting:
        path = pathlib.Path(setting).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
        path = pathlib.Path(base) / "dualtape" / "jit"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


_TOOLCHAIN = []


def _toolchain():
    """What every compiled module depends on besides its text: versions, the machine, and the
    source of dualtape's runtime helpers and their numba twins (computed once)."""
    if not _TOOLCHAIN:
        import numba
        here = pathlib.Path(__file__).resolve().parent
        digest = hashlib.sha256()
        for folder in (here, here.parent / "runtime"):
            for path in sorted(folder.glob("*.py")):
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _TOOLCHAIN.append("|".join([sys.version, np.__version__, numba.__version__, platform.machine(),
                                    numba.config.CPU_NAME or "host", digest.hexdigest()]))
    return _TOOLCHAIN[0]


def _helpers():
    from ..runtime.names import RUNTIME_HELPERS
    from . import runtime as jit_runtime, vecmath
    return {id(v) for names in (RUNTIME_HELPERS, jit_runtime.NAMES, vecmath.KERNEL_GLOBALS) for v in names.values()}


def value_key(value, helpers):
    """A text that determines `value` as numba freezes it, or None when there is none."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.generic):
        return f"np.{value.dtype.str}:{value.tobytes().hex()}"
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject or value.nbytes > MAX_ARRAY_BYTES:
            return None
        data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"array:{value.dtype.str}:{value.shape}:{data}"
    if isinstance(value, tuple):
        parts = [value_key(v, helpers) for v in value]
        return None if None in parts else "(" + ",".join(parts) + ")"
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if id(value) in helpers:
        return f"dualtape:{getattr(value, '__name__', type(value).__name__)}"
    return None


LIBRARIES = ("numpy", "math")  # modules whose attributes numba reads as functions and constants of theirs


def key(source, namespace, names, attributes=()):
    """The hash that names the compiled module of `source` run in `namespace`, reading the
    globals `names` and the attributes `(name, attribute)` of them; None when one of those has
    no key (the module is not cached)."""
    helpers = _helpers()
    parts = [_toolchain(), source]
    for name in sorted(names):
        if name in namespace:
            part = value_key(namespace[name], helpers)
            if part is None:
                return None
            parts.append(f"{name}={part}")
    for name, attribute in sorted(attributes):
        value = namespace.get(name)
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] not in LIBRARIES:
            part = value_key(getattr(value, attribute, None), helpers)  # (numba froze `other.K`'s value)
            if part is None or isinstance(getattr(value, attribute, None), types.ModuleType):
                return None
            parts.append(f"{name}.{attribute}={part}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def place(source, namespace, names, attributes=()):
    """A module whose file holds `source` in the cache (written once) and whose globals are
    `namespace`'s, registered in sys.modules (numba imports a cached function's module by name
    to rebuild its environment); None when the module is not cached. Run `source` in its
    `__dict__`."""
    folder = directory()
    digest = None if folder is None else key(source, namespace, names, attributes)
    if digest is None:
        return None
    path = folder / f"{MODULE_PREFIX}{digest}.py"
    if not path.exists():
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            temporary.write_text(source, encoding="utf-8")
            os.replace(temporary, path)  # (atomic: a concurrent process sees all of it or nothing)
        except OSError:
            return None
    module = types.ModuleType(path.stem)
    module.__dict__.update(namespace)
    for dunder in ("__spec__", "__loader__", "__package__", "__path__", "__cached__"):
        module.__dict__.pop(dunder, None)  # (the user's module's, copied with its globals)
    module.__name__, module.__file__ = path.stem, str(path)  # (the name numba imports on a load)
    sys.modules[path.stem] = module
    return module


def is_cached(function):
    """Whether `function` runs from a file this cache placed."""
    return os.path.basename(function.__code__.co_filename).startswith(MODULE_PREFIX)


def raised_loading(exc):
    """Whether `exc` came out of numba loading a cached function (a file it cannot read back:
    truncated, or written by another setup), not out of compiling or running the code."""
    import traceback
    return any(frame.filename.endswith(os.path.join("numba", "core", "caching.py"))
               for frame in traceback.extract_tb(exc.__traceback__))
