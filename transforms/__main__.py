"""Command line: print or write the code the transformer generates for a function.

    python -m dualtape.transforms path/to/module.py:function [--argnums 0,1]
        [--mode reverse|forward|hvp] [--no-optimize] [-o out.py]

`function` may be a plain function or one already decorated with a transform
(`@dualtape.transforms.grad(argnums=1)`, `jvp`, `hvp`, `vjp`): then its underlying function,
mode, argnums and options are used, unless given on the command line. `--wrt` is an alias of
`--argnums`.

Errors (a missing file or function, an unsupported construct) print one line naming the
problem and exit with status 2.
"""

import argparse
import importlib.util
import pathlib
import sys

from . import api, api_forward
from .api import Transform
from .frontend.parse import TransformError


def _parser():
    p = argparse.ArgumentParser(prog="python -m dualtape.transforms",
                                description="Print or write the derivative code dualtape.transforms generates.")
    p.add_argument("target", help="path/to/module.py:function")
    p.add_argument("--argnums", "--wrt", dest="argnums", default=None,
                   help="comma-separated argument indices or names (default 0; --wrt is an alias)")
    p.add_argument("--mode", choices=("reverse", "forward", "hvp"), default=None, help="default reverse")
    p.add_argument("--no-optimize", action="store_true", default=None,
                   help="skip activity analysis and simplification")
    p.add_argument("-o", "--output", help="write a self-contained module here instead of printing")
    return p


def _fail(message):
    print(f"error: {message}", file=sys.stderr)
    return 2


def _load(target):
    path_text, sep, name = target.rpartition(":")
    if not sep or not path_text or not name:
        raise LookupError(f"expected path/to/module.py:function, got {target!r}")
    path = pathlib.Path(path_text)
    if not path.is_file():
        raise LookupError(f"no such file: {path_text}")
    module_name = "_dualtape_cli_" + path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - report any import failure in one line
        raise LookupError(f"cannot import {path_text}: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, name, None)
    if fn is None:
        raise LookupError(f"{path_text} has no function {name!r}")
    if not callable(fn):
        raise LookupError(f"{path_text}:{name} is a {type(fn).__name__}, not a function")
    return fn


def _wrt(text):
    items = [w.strip() for w in text.split(",") if w.strip()]
    items = [int(w) if w.lstrip("-").isdigit() else w for w in items]
    return items[0] if len(items) == 1 else tuple(items)


_MODES = {"grad": "reverse", "vjp": "reverse", "jvp": "forward", "hvp": "hvp"}


def _unwrap_transform(fn):
    """(function, defaults) of a decorated transform (`@transforms.grad(...)`, its jit form), or of
    a plain function: the CLI reads the function and the options it was decorated with."""
    transform = getattr(fn, "inner", fn)  # a Jitted wraps the uncompiled transform
    if isinstance(transform, Transform):
        wrt = transform.wrt if transform.wrt_is_tuple else transform.wrt[0]
        return transform.f, {"mode": _MODES.get(transform.mode, "reverse"), "argnums": wrt,
                             "optimize": transform.optimize}
    return fn, {"mode": "reverse", "argnums": 0, "optimize": True}


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        fn, defaults = _unwrap_transform(_load(args.target))
    except LookupError as exc:
        return _fail(exc.args[0])
    optimize = defaults["optimize"] if args.no_optimize is None else not args.no_optimize
    args.mode = args.mode or defaults["mode"]
    try:
        wrt = defaults["argnums"] if args.argnums is None else _wrt(args.argnums)
        if args.mode == "reverse":
            transformed = api.grad(fn, argnums=wrt, optimize=optimize)
        else:
            transformed = api_forward.make_forward("jvp" if args.mode == "forward" else "hvp", fn, wrt, optimize,
                                                    False)
        if args.output:
            transformed.save(args.output)
        else:
            sys.stdout.write(transformed.source)
    except TransformError as exc:
        return _fail(" ".join(str(exc).split()))
    except (TypeError, ValueError) as exc:
        return _fail(f"{type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
