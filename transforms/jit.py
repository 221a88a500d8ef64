"""Compiled generated code: `grad(f, jit=True)` (and vjp, jvp, hvp) hands the emitted code to numba.

The generated adjoint is plain Python on floats, NumPy arrays and `math`, plus a list `_stack`
of saved values and a few runtime helpers. numba compiles all of it once two things change:

* the stack. `_stack.append(v)` / `v = _stack.pop()` always name the same variables (or the
  same slice) on both sides, so the saved values split into one stack per name, each LIFO on
  its own. A first, uncompiled run of the generated code with these arguments (the *probe*)
  records what each stack holds: Python floats, bools, ints and tuples of floats get a
  preallocated NumPy array and an integer top (`_stack_x`, `_top_x`), doubled by `grow` when
  full; anything else (arrays) a list, which numba types by what is appended. A variable
  set to `None` before a loop (saved before its first value exists) starts as a zero of its
  stack's type.
* the helpers. `unbroadcast`, `unreduce`, `zeros_like`, ... are replaced by twins that numba
  specialises on the argument types (jit_runtime.py); the source calls the same names.

`del` statements go (they only free memory early). The result, `df.source`, is exactly the
source numba compiled. One compiled version is kept per combination of argument types (in
memory). Where numba cannot compile a construct, a TransformError names it with the
generated line and the user's line it comes from; with `jit="fallback"` the uncompiled
generated code runs instead (`df.fallback_reason` says why).
"""

import ast
import builtins
import inspect
import itertools
import linecache
import re
import time

import numpy as np

from .api import _arg_kinds, refuse_complex
from .emit import RUNTIME_NAMES
from .parse import TransformError
from .runtime import shape_of

_counter = itertools.count(1)
_FAST_TYPES = (float, int, bool, np.float64, np.int64)  # scalars: their type is the whole key
_CACHE = {}
_STACKS = ("_stack", "_dstack")
_PUSH = re.compile(r"^(\s*)(_d?stack)\.append\((.*)\)\s*$")
_POP = re.compile(r"^(\s*)(.+?) = (_d?stack)\.pop\(\)\s*$")
_NEW = re.compile(r"^(\s*)(_d?stack) = \[\]\s*$")
_DEL = re.compile(r"^\s*del .*$")
_NONE = re.compile(r"^(\s*)(\w+) = None\s*$")
_DEF = re.compile(r"^\s*def \w+\(.*\):\s*$")
_FOR_REVERSED = re.compile(r"^(\s*)for (.+) in reversed\((range\(.*\))\):(.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
INSTALL = "pip install 'dualtape[jit]'"


def import_numba(api):
    """numba, or a TransformError saying how to install it (numba is an optional extra)."""
    try:
        import numba
    except ImportError:
        raise TransformError(
            f"[{api}] jit=True compiles the generated code with numba, which is not installed.\n  "
            f"Install it with `{INSTALL}` (or `pip install numba`), or call without jit=True.") from None
    return numba


# -- the stacks --------------------------------------------------------------------------------

def _key(stack, text, pushed):
    """The stack a push or pop belongs to: what it saves (pushed: `saved(v)` saves v)."""
    node = ast.parse(text.strip(), mode="eval").body
    if pushed and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "saved" \
            and len(node.args) == 1:
        node = node.args[0]
    return stack, ast.unparse(node)


def _channels(lines):
    """{key: readable suffix}, in order of first use."""
    keys = {}
    for line in lines:
        m = _PUSH.match(line)
        key = _key(m.group(2), m.group(3), True) if m else None
        if key is None:
            m = _POP.match(line)
            key = _key(m.group(3), m.group(2), False) if m else None
        if key is not None and key not in keys:
            base = re.sub(r"\W+", "_", key[1]).strip("_") or "v"
            base = ("d" if key[0] == "_dstack" else "") + base
            name, k = base, 1
            while name in keys.values():
                k += 1
                name = f"{base}{k}"
            keys[key] = name
    return keys


class _Probe:
    """The `_stack` of the probe run: records what each stack holds, and how deep it gets."""

    def __init__(self):
        self.items, self.samples, self.depth, self.peak = [], {}, {}, {}

    def push(self, key, value):
        self.items.append(value)
        self.samples.setdefault(key, []).append(value)
        d = self.depth[key] = self.depth.get(key, 0) + 1
        self.peak[key] = max(self.peak.get(key, 0), d)

    def pop(self, key):
        self.depth[key] = self.depth.get(key, 0) - 1
        return self.items.pop()


def _is_float(v):
    return isinstance(v, float)


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _kind(samples):
    """How a stack is stored: ('f',) ('i',) ('b',) float/int/bool arrays, ('t', k) a k-column
    float array, ('list',) a list (arrays, mixed items, or nothing seen in the probe)."""
    values = [v for v in samples if v is not None]
    if not values:
        return ("list",)
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return ("b",)
    if all(_is_int(v) for v in values):
        return ("i",)
    if all(_is_float(v) for v in values):
        return ("f",)
    if all(isinstance(v, tuple) for v in values):
        k = len(values[0])
        if k and all(len(v) == k and all(_is_float(x) for x in v) for v in values):
            return ("t", k)
    return ("list",)


_ALLOC = {"f": "np.empty({cap})", "i": "np.empty({cap}, dtype=np.int64)",
          "b": "np.empty({cap}, dtype=np.bool_)", "t": "np.empty(({cap}, {k}))"}
_ZERO = {"f": "0.0", "i": "0", "b": "False"}


def _positional_def(line):
    """`def f(x, *, dx):` as `def f(x, dx):` (numba takes no keyword-only parameters); the
    wrapper passes every argument by position."""
    indent = line[:len(line) - len(line.lstrip())]
    try:
        node = ast.parse(line.strip() + "\n    pass").body[0]
    except SyntaxError:
        return line
    a = node.args
    if not a.kwonlyargs or a.vararg or a.kwarg:
        return line
    defaults = [None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults)) + list(a.defaults)
    defaults += list(a.kw_defaults)
    a.args, a.kwonlyargs, a.kw_defaults = a.args + a.kwonlyargs, [], []
    seen = False
    for i, d in enumerate(defaults):  # after a default, every parameter needs one
        seen = seen or d is not None
        if seen and d is None:
            defaults[i] = ast.Constant(None)
    first = next((i for i, d in enumerate(defaults) if d is not None), len(defaults))
    a.defaults = defaults[first:]
    node.body = []
    return indent + ast.unparse(node).splitlines()[0]


def _reversed_range(line, m):
    """`for i in reversed(range(...)):` as a range counting down (numba has no `reversed`)."""
    indent, target, call, rest = m.groups()
    try:
        args = ast.parse(call, mode="eval").body.args
    except SyntaxError:
        return line
    u = [ast.unparse(a) for a in args]
    if len(u) == 1:
        down = f"range({u[0]} - 1, -1, -1)"
    elif len(u) == 2:
        down = f"range({u[1]} - 1, {u[0]} - 1, -1)"
    elif isinstance(args[2], ast.Constant) and isinstance(args[2].value, int) and args[2].value > 0:
        a, b, k = u[0], u[1], args[2].value
        down = f"range({a} + max({b} - ({a}) - 1, -1) // {k} * {k}, {a} - 1, -{k})"
    else:
        return line
    return f"{indent}for {target} in {down}:{rest}"


def positional_source(source):
    """The generated source with every parameter positional (see `_positional_def`)."""
    return "\n".join(_positional_def(line) if _DEF.match(line) else line for line in source.splitlines()) + "\n"


def probe_source(source):
    """The generated source with its stacks recording (`_Probe`), for the probe run."""
    lines = positional_source(source).splitlines()
    out = []
    for line in lines:
        m = _PUSH.match(line)
        if m:
            key = _key(m.group(2), m.group(3), True)
            out.append(f"{m.group(1)}{m.group(2)}.push({key!r}, {m.group(3)})")
            continue
        m = _POP.match(line)
        if m:
            key = _key(m.group(3), m.group(2), False)
            out.append(f"{m.group(1)}{m.group(2)} = {m.group(3)}.pop({key!r})")
            continue
        m = _NEW.match(line)
        out.append(f"{m.group(1)}{m.group(2)} = _Probe()" if m else line)
    return "\n".join(out) + "\n"


def jit_source(source, samples=None, peak=None):
    """The numba-compatible twin of a generated module's source (see the module docstring).
    `samples` / `peak`: what the probe saw on each stack (None: every stack a list)."""
    samples, peak = samples or {}, peak or {}
    lines = source.splitlines()
    names = _channels(lines)
    kinds = {key: _kind(samples.get(key, ())) for key in names}
    zero_of = {key[1]: _ZERO[kind[0]] for key, kind in kinds.items() if kind[0] in _ZERO}
    out = []
    for line in lines:
        m = _NEW.match(line)
        if m:
            indent, stack = m.groups()
            for key, name in names.items():
                if key[0] != stack:
                    continue
                kind = kinds[key]
                if kind[0] == "list":
                    out.append(f"{indent}_stack_{name} = []")
                else:
                    cap = max(8, peak.get(key, 0))
                    alloc = _ALLOC[kind[0]].format(cap=cap, k=kind[-1])
                    out.append(f"{indent}_stack_{name} = {alloc}")
                    out.append(f"{indent}_top_{name} = 0")
            continue
        m = _PUSH.match(line)
        if m:
            indent, stack, value = m.groups()
            key = _key(stack, value, True)
            name, kind = names[key], kinds[key]
            if kind[0] == "list":
                out.append(f"{indent}_stack_{name}.append({value})")
                continue
            out.append(f"{indent}if _top_{name} == len(_stack_{name}):")
            out.append(f"{indent}    _stack_{name} = grow(_stack_{name})")
            node = ast.parse(value, mode="eval").body
            if kind[0] == "t" and isinstance(node, ast.Tuple):
                for j, item in enumerate(node.elts):
                    out.append(f"{indent}_stack_{name}[_top_{name}, {j}] = {ast.unparse(item)}")
            elif kind[0] == "t":
                for j in range(kind[1]):
                    out.append(f"{indent}_stack_{name}[_top_{name}, {j}] = ({value})[{j}]")
            else:
                out.append(f"{indent}_stack_{name}[_top_{name}] = {value}")
            out.append(f"{indent}_top_{name} += 1")
            continue
        m = _POP.match(line)
        if m:
            indent, target, stack = m.groups()
            key = _key(stack, target, False)
            name, kind = names[key], kinds[key]
            if kind[0] == "list":
                out.append(f"{indent}{target} = _stack_{name}.pop()")
                continue
            out.append(f"{indent}_top_{name} -= 1")
            if kind[0] == "t":
                items = ", ".join(f"_stack_{name}[_top_{name}, {j}]" for j in range(kind[1]))
                out.append(f"{indent}{target} = {items}")
            else:
                out.append(f"{indent}{target} = _stack_{name}[_top_{name}]")
            continue
        if _DEL.match(line):
            out.append((re.match(r"\s*", line).group(0) + "pass",))  # kept only where a block needs it
            continue
        m = _DEF.match(line)
        if m:
            line = _positional_def(line)
        m = _FOR_REVERSED.match(line)
        if m:
            line = _reversed_range(line, m)
        m = _NONE.match(line)
        if m and m.group(2) in zero_of:
            out.append(f"{m.group(1)}{m.group(2)} = {zero_of[m.group(2)]}")
            continue
        out.append(line)
    text = "\n".join(line for line in out if isinstance(line, str)) + "\n"
    try:
        ast.parse(text)
    except SyntaxError:  # a block that held only `del`: `pass` there
        text = "\n".join(line if isinstance(line, str) else line[0] for line in out) + "\n"
    return text


# -- compiling and calling -----------------------------------------------------------------------

def _namespace(module, overrides):
    ns = dict(module.namespace)
    ns.update(RUNTIME_NAMES)
    ns.update(overrides)
    ns["__builtins__"] = builtins
    return ns


def _exec(source, name, namespace, tag):
    filename = f"<dualtape {tag} {name}#{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name], filename


class _Entry:
    """One specialization: the generated module for these argument types, its uncompiled
    function, and (after the first call) the compiled one and its source."""

    def __init__(self, owner, module, extra):
        self.owner, self.module, self.extra = owner, module, extra
        self.python = module.compile(owner.inner.name)
        self.signature = inspect.signature(self.python)
        self.source = None
        self.fn = None
        self.compile_seconds = None
        self.fallback_reason = None

    def positional(self, args, kwargs):
        """The arguments in the order of the compiled function's parameters (all positional)."""
        if not kwargs:
            return args
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments[p] for p in self.signature.parameters)

    def build(self, args):
        """Probe, rewrite and compile (the first call); returns the result of this call."""
        numba = self.owner.numba
        name = self.owner.inner.name
        start = time.perf_counter()
        generated = self.module.source()
        probe_ns = _namespace(self.module, {"_Probe": _Probe})
        probe, _ = _exec(probe_source(generated), name, probe_ns, "probe")
        stacks = {}
        orig_probe = _Probe

        class Recording(orig_probe):
            def __init__(self):
                super().__init__()
                stacks[len(stacks)] = self

        probe_ns["_Probe"] = Recording
        probe(*args)
        samples, peak = {}, {}
        for rec in stacks.values():
            for key, values in rec.samples.items():
                samples.setdefault(key, []).extend(values)
            for key, depth in rec.peak.items():
                peak[key] = max(peak.get(key, 0), depth)
        from . import jit_runtime
        self.source = jit_source(generated, samples, peak)
        python, filename = _exec(self.source, name, _namespace(self.module, jit_runtime.NAMES), "jit")
        namespace = python.__globals__
        tree = ast.parse(self.source)
        for node in tree.body:  # the adjoints of called user functions too
            if isinstance(node, ast.FunctionDef) and node.name != name:
                namespace[node.name] = numba.njit(namespace[node.name])
        for used in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}:  # user functions called
            value = namespace.get(used)
            if inspect.isfunction(value) and value.__module__ not in ("dualtape.transforms.jit_runtime",) \
                    and not getattr(value, "__module__", "").startswith(("numba", "numpy", "dualtape")) \
                    and value.__name__ != "<lambda>" and used != name:
                namespace[used] = numba.njit(value)
        compiled = numba.njit(python)
        try:
            result = compiled(*args)
        except numba.core.errors.NumbaError as exc:
            error = self.owner.refusal(exc, self.source, filename)
            if not self.owner.fallback:
                raise error from None
            self.fallback_reason = str(error)
            self.owner.fallback_reason = self.fallback_reason
            self.source = positional_source(generated)
            self.fn, _ = _exec(self.source, name, _namespace(self.module, {}), "fallback")
            self.compile_seconds = time.perf_counter() - start
            return self.fn(*args)
        self.fn = compiled
        self.compile_seconds = time.perf_counter() - start
        return result

    def __call__(self, args, kwargs):
        args = self.positional(args, kwargs)
        self.owner._last = self
        if self.fn is None:
            return self.build(args)
        return self.fn(*args)


def _type_key(value):
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.ndim)
    if isinstance(value, tuple):
        return (tuple,) + tuple(_type_key(v) for v in value)
    return type(value)


class Jitted:
    """`transforms.grad(f, jit=True)` and friends: the generated code compiled by numba.

    Call it like the uncompiled transform. `.source` is the source numba compiled for the
    latest call (before any call: the general version, every stack a list);
    `.source_for(*args)` the one for these arguments; `.compile_seconds` what the latest
    specialization's probe, rewrite and compilation (with its first call) took.
    """

    def __init__(self, inner, jit):
        if jit not in (True, "fallback"):
            raise TransformError(f"[{inner.api}] jit={jit!r}: pass jit=True (compile with numba, refuse what it "
                                 "cannot compile) or jit='fallback' (run the uncompiled code there).")
        self.numba = import_numba(inner.api)
        self.inner, self.fallback = inner, jit == "fallback"
        self.api, self.mode, self.name = inner.api, inner.mode, inner.name
        self.__name__ = inner.name
        self.__doc__ = inner.__doc__
        self.wrt = inner.wrt
        self._entries = {}
        self._fast = {}  # argument types -> (compiled gradient, its entry)
        self._last = None
        self.fallback_reason = None

    def __repr__(self):
        return repr(self.inner)[:-1] + ", jit>"

    # -- what was compiled ---------------------------------------------------------------------
    @property
    def source(self):
        if self._last is not None and self._last.source is not None:
            return self._last.source
        return jit_source(self.inner.source)

    @property
    def compile_seconds(self):
        return None if self._last is None else self._last.compile_seconds

    def source_for(self, *args, **kwargs):
        """The compiled source for these arguments (compiling it if no call did yet)."""
        self(*args, **kwargs)
        return self._last.source

    # -- calling ---------------------------------------------------------------------------------
    def _entry(self, args, kwargs, extra=(), options=None, bound=None):
        key = tuple(_type_key(a) for a in args) + tuple((k, _type_key(v)) for k, v in kwargs.items()) \
            + extra + tuple(sorted((options or {}).items()))
        entry = self._entries.get(key)
        if entry is None:
            kinds = _arg_kinds(self.inner._bind(args, kwargs) if bound is None else bound)
            module, params = self.inner._build(kinds, *extra, **(options or {}))
            entry = self._entries[key] = (_Entry(self, module, extra), params)
        return entry

    def __call__(self, *args, **kwargs):
        if not kwargs:  # the fast path: a gradient compiled for these argument types already
            hit = self._fast.get(tuple(map(type, args)))
            if hit is not None:
                self._last = hit[1]
                return hit[0](*args)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if self.mode in ("jvp", "hvp"):
            args, ts, bound, batch = self.inner._split(args, kwargs)
            entry, tparams = self._entry(args, kwargs, (batch,), bound=bound)
            kwargs = dict(kwargs, **{p: t for p, t in zip(tparams, ts)})
            value, tangent = entry(args, kwargs)
            return tangent if self.mode == "hvp" else (value, tangent)
        if self.mode == "vjp":
            if not args:
                raise TypeError(f"[{self.api}] call it as f_vjp(*args, dy).")
            *args, dy = args
            refuse_complex(self.api, (dy,))
        refuse_complex(self.api, args)
        refuse_complex(self.api, kwargs.values())
        args = tuple(args)
        if self.mode == "vjp":
            entry, seed = self._entry(args, kwargs)
            return entry(args, dict(kwargs, **{seed: dy}))
        entry, _ = self._entry(args, kwargs)
        if entry.python.__dualtape_scalar_output__:
            result = entry(args, kwargs)
            if not kwargs and entry.fn is not None and all(isinstance(a, _FAST_TYPES) for a in args):
                self._fast[tuple(map(type, args))] = (entry.fn, entry)
            return result
        entry, _ = self._entry(args, kwargs, options={"value": True})
        gradient, value = entry(args, kwargs)
        if shape_of(value) != ():
            code = self.inner.f.__code__
            raise TransformError(
                f"[{self.api}] {code.co_filename}:{code.co_firstlineno} in {self.inner.f.__name__}: it returned a "
                f"value of shape {shape_of(value)}; grad needs a scalar output.\n  Use transforms.vjp, or reduce "
                "the output first (e.g. return np.sum(y)).")
        return (gradient, value) if self.inner.preserve_result else gradient

    # -- refusals ---------------------------------------------------------------------------------
    def refusal(self, exc, source, filename):
        """A TransformError naming what numba rejected, on which generated line, and the user's
        line it comes from."""
        text = _ANSI.sub("", str(exc))
        construct = _construct(text)
        lines = source.splitlines()
        where = ""
        found = [int(n) for n in re.findall(re.escape(filename) + r'", line (\d+)', text)]
        if found:
            number = found[-1]
            where = f"\n  generated line {number}: {lines[number - 1].strip()}"
            user = _user_line(self.inner.f, lines, number)
            if user:
                where += f"\n  from {user}"
        return TransformError(
            f"[{self.api}] numba cannot compile the generated code of {self.inner.f.__name__}: {construct}{where}"
            f"\n  Rewrite that construct (numba compiles floats, NumPy arrays, math and np functions, loops and "
            "branches), pass jit='fallback' to run the uncompiled code there, or call without jit=True.")


def _construct(text):
    keep = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("Failed in", "During:", "File ", "<source", "^")) or s.startswith("- "):
            continue
        if s.startswith(("No implementation", "Untyped global", "Unknown attribute", "Use of unsupported",
                         "Cannot", "Invalid use", "Unsupported", "NameError", "Rejected")) or not keep:
            keep.append(s)
        if len(keep) >= 2:
            break
    return " ".join(keep)[:400] or text[:400]


def _user_line(f, lines, number):
    """`file:line: code` of the user's statement the generated line `number` comes from: the
    nearest `# <statement>` comment above it that is a line of f."""
    try:
        src, first = inspect.getsourcelines(f)
    except (OSError, TypeError):
        return None
    stripped = [s.strip() for s in src]
    for k in range(number - 1, -1, -1):
        s = lines[k].strip()
        if s.startswith("# ") and s[2:] in stripped and s[2:] not in ("forward", "backward"):
            j = stripped.index(s[2:])
            return f"{f.__code__.co_filename}:{first + j}: {s[2:]}"
    return None


def jitted(make, f, jit, verbose=False):
    """The Jitted transform of `make(f)` (the uncompiled transform), made once per (transform, jit);
    with f=None, the decorator."""
    if f is None:
        return lambda g: jitted(make, g, jit, verbose)
    inner = make(f)
    key = (inner, jit)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _CACHE[key] = Jitted(inner, jit)
    if verbose:
        print(hit.source)
    return hit
