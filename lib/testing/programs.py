"""`programs()`: a hypothesis strategy drawing whole Python/NumPy functions to differentiate.

A drawn `Program` holds the source of a module defining `f` (plus module constants and
helper functions), the inputs to call it with, and the features it uses. The grammar
(program_grammar.py) is typed: every variable is a float scalar, an n-vector or an n x n
matrix (n = 2 or 3), so every program is valid Python that runs on plain floats and NumPy
arrays. Statements and blocks are drawn as counted lists, simplest kind first, so a
failing program shrinks to a few lines. `check_modes(program)` differentiates it every way
dualtape can (check_modes.py).

>>> from hypothesis import given, settings
>>> @settings(max_examples=5, deadline=None)
... @given(programs(exclude={"closure", "math"}))
... def test_all_modes_agree(program):
...     check_modes(program)
"""

import hashlib
import importlib.util
import linecache
import pathlib
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

from .program_grammar import FEATURES, Env, ProgramGen

_MODULE_DIR = []  # one temporary directory per process, made on first use
_LOADED = {}      # source hash -> module, the KEEP_MODULES latest used (least recent first)
KEEP_MODULES = 64  # a long run (benchmarks/check_programs.py) frees older programs and their transforms


@dataclass(frozen=True)
class Program:
    """A drawn program: `source` defines `name`; `args` are the inputs; `features` used."""
    source: str
    args: tuple
    features: frozenset
    name: str = "f"

    def function(self):
        """Write the source to a module file (once per process), import it, return `f`."""
        return getattr(load_module(self.source), self.name)

    def __repr__(self):
        return (f"Program(features={sorted(self.features)}, args={self.args!r}, source=\n"
                f"{self.source})")


def load_module(source):
    """Import `source` from a file in a temporary directory: `inspect` can read it there."""
    key = hashlib.sha1(source.encode()).hexdigest()[:16]
    module = _LOADED.pop(key, None)
    if module is None:
        if not _MODULE_DIR:
            _MODULE_DIR.append(pathlib.Path(tempfile.mkdtemp(prefix="dualtape_programs_")))
        name = f"dualtape_program_{key}"
        path = _MODULE_DIR[0] / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # inspect.getsource looks modules up by name
        spec.loader.exec_module(module)
    _LOADED[key] = module
    while len(_LOADED) > KEEP_MODULES:  # the file stays: a program still held imports it again
        old = _LOADED.pop(next(iter(_LOADED)))
        sys.modules.pop(old.__name__, None)
        linecache.cache.pop(old.__file__, None)
    return module


def _array_text(values):
    return f"np.array({np.asarray(values).tolist()!r})"


def _as_shape(name, shape, target, n):
    """`name` (of `shape`) turned into a value of shape `target`, to be added to the output."""
    if shape == target:
        return name
    if target == ():
        return f"np.sum({name})"
    if shape == ():
        return f"{name} * np.ones({target if len(target) == 2 else n})"
    return f"np.sum({name}, axis=0)" if target == (n,) else f"{name} * np.ones(({n}, {n}))"


def _helpers(gen, env_constants):
    """0 to 2 helper functions taking and returning scalars or arrays."""
    lines = []
    for k in range(gen.draw(gen.st.integers(0, 2))):
        name = f"helper{k + 1}"
        shapes = [gen.shape_choice() for _ in range(gen.draw(gen.st.integers(1, 2)))]
        ret = gen.shape_choice()
        env = env_constants.child()
        params = []
        for s in shapes:
            p = gen.new_name("p")
            params.append(p)
            env.vars[p] = s
        gen.in_helper = True
        body = gen.block(env, 1, False) if gen.draw(gen.st.booleans()) else []
        gen.in_helper = False
        lines += [f"def {name}({', '.join(params)}):"] + ["    " + b for b in body]
        lines += [f"    return {gen.expr(env, ret, 2).text}", "", ""]
        gen.helpers.append((name, shapes, ret))
    return lines


def _draw_program(draw, features):
    from hypothesis import strategies as st  # here: hypothesis is an optional test dependency
    n = draw(st.sampled_from([2, 3]))
    gen = ProgramGen(draw, n, features)
    env = Env()
    header = ["import math", "", "import numpy as np", "", ""]
    constants = []
    if "constants" in features:
        for k, shape in enumerate([(), (n,), (n, n)]):
            if draw(st.booleans()):
                name = ["C", "V", "M"][k] + "1"
                value = gen.number() if shape == () else _array_text(
                    np.round(draw(st.lists(st.floats(-1, 1), min_size=n ** k, max_size=n ** k)), 3).reshape(shape))
                constants.append(f"{name} = {value}")
                env.vars[name] = shape
                env.readonly.add(name)
        constants += ["", ""] if constants else []
    helpers = _helpers(gen, env) if "helper" in features else []  # before closure variables
    closure = {}
    if gen.chance("closure"):
        for k, shape in enumerate([(), (n,)]):
            name = ["cc", "vv"][k] + "1"
            closure[name] = gen.number() if shape == () else _array_text(
                np.round(np.linspace(-0.5, 0.7, n), 3))
            env.vars[name] = shape
            env.readonly.add(name)

    params, args = [], []
    for k in range(draw(st.integers(1, 2))):
        shape = gen.pick([("scalar_inputs", ()), (None, (n,)), ("matrix_inputs", (n, n))])
        name = "xyz"[k]
        params.append(name)
        env.vars[name] = shape
        values = draw(st.lists(st.floats(-1.5, 1.5, allow_nan=False), min_size=max(1, n ** len(shape)),
                               max_size=max(1, n ** len(shape))))
        args.append(round(values[0], 3) if shape == () else np.round(np.array(values), 3).reshape(shape))
    gen.ret_shape = gen.shape_choice() if gen.chance("array_output") else ()
    gen.taken |= set(params)
    body = gen.block(env, 2, False, top=True)
    owned = [v for v in sorted(env.owned) if env.vars.get(v) == gen.ret_shape]
    if owned and gen.chance("return_buffer"):
        ret = owned[0]
    else:
        ret = gen.expr(env, gen.ret_shape, 2).text
        # every parameter and the two newest variables reach the output, so that the
        # statements drawn are not all dead code (they shrink away with the statements)
        live = [v for v in env.vars if v not in env.readonly and v not in params][-2:]
        ret = " + ".join([ret] + [_as_shape(v, env.vars[v], gen.ret_shape, n) for v in params + live])
    body = body + [f"return {ret}"]

    lines = header + constants + gen.module_lines + helpers
    if closure:
        lines += [f"def make_f({', '.join(closure)}):", f"    def f({', '.join(params)}):"]
        lines += ["        " + b for b in body]
        lines += ["    return f", "", "", f"f = make_f({', '.join(closure.values())})"]
    else:
        lines += [f"def f({', '.join(params)}):"] + ["    " + b for b in body]
    features_used = frozenset(gen.used) | ({"scalar_inputs"} if any(np.ndim(a) == 0 for a in args) else set())
    return Program("\n".join(lines) + "\n", tuple(args), features_used)


def programs(features=None, exclude=()):
    """A hypothesis strategy drawing `Program`s that use only `features` (default: all of
    `FEATURES`) minus `exclude`.

    >>> programs(exclude={"while_value"}).example().source.startswith("import math")  # doctest: +SKIP
    True
    """
    from hypothesis import strategies as st  # here: hypothesis is an optional test dependency
    chosen = set(FEATURES if features is None else features) - set(exclude)
    unknown = (set(features or ()) | set(exclude)) - set(FEATURES)
    if unknown:
        raise ValueError(f"[programs] unknown features {sorted(unknown)}; choose from "
                         f"dualtape.testing.FEATURES: {', '.join(FEATURES)}.")
    chosen = frozenset(chosen)
    return st.composite(lambda draw: _draw_program(draw, chosen))()
