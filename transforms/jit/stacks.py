"""The generated source as numba compiles it: typed stacks, positional parameters, ranges.

`_stack.append(v)` / `v = _stack.pop()` always name the same variables (or the same slice)
on both sides, so the saved values split into one stack per name, each LIFO on its own. A
first, uncompiled run of the generated code (the *probe*, with `probe_source`) records what
each stack holds: Python floats, bools, ints and tuples of floats get a preallocated NumPy
array and an integer top (`_stack_x`, `_top_x`), doubled by `grow` when full; anything else
(arrays) a list, which numba types by what is appended. A variable set to `None` before a
loop (saved before its first value exists) starts as a zero of its stack's type. `del`
statements go (they only free memory early), `reversed(range(...))` becomes a range counting
down, and keyword-only parameters positional ones. Comments and names stay as generated.
"""

import ast
import re

import numpy as np

_PUSH = re.compile(r"^(\s*)(_d?stack)\.append\((.*)\)\s*$")
_POP = re.compile(r"^(\s*)(.+?) = (_d?stack)\.pop\(\)\s*$")
_NEW = re.compile(r"^(\s*)(_d?stack) = \[\]\s*$")
_DEL = re.compile(r"^\s*del .*$")
_NONE = re.compile(r"^(\s*)(\w+) = None\s*$")
_DEF = re.compile(r"^\s*def \w+\(.*\):\s*$")
_FOR_REVERSED = re.compile(r"^(\s*)for (.+?) in reversed\((.*)\):(.*)$")


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
    """`for i in reversed(r):` as a range counting down (numba has no `reversed`): r is a
    `range(...)` call, a name holding one (`_range1 = range(m)`, a bound computed in f), or
    either cut to a break's trip count (`r[:_count1]`)."""
    indent, target, rest = m.group(1), m.group(2), m.group(4)
    try:
        r = ast.parse(m.group(3), mode="eval").body
    except SyntaxError:
        return line
    count = None
    if isinstance(r, ast.Subscript) and isinstance(r.slice, ast.Slice) and r.slice.lower is None \
            and r.slice.step is None and r.slice.upper is not None:
        r, count = r.value, ast.unparse(r.slice.upper)
    is_range = isinstance(r, ast.Call) and isinstance(r.func, ast.Name) and r.func.id == "range" and not r.keywords
    u = [ast.unparse(a) for a in r.args] if is_range else []
    if is_range and len(u) == 1:
        down = f"range({count or u[0]} - 1, -1, -1)"
    elif is_range and len(u) == 2:
        down = f"range({u[1]} - 1, {u[0]} - 1, -1)" if count is None else f"range({u[0]} + {count} - 1, {u[0]} - 1, -1)"
    elif is_range and len(u) == 3 and isinstance(r.args[2], ast.Constant) and type(r.args[2].value) is int \
            and r.args[2].value > 0:
        a, b, k = u[0], u[1], r.args[2].value
        last = f"max({b} - ({a}) - 1, -1) // {k}" if count is None else f"({count} - 1)"
        down = f"range({a} + {last} * {k}, {a} - 1, -{k})"
    elif isinstance(r, ast.Name) or is_range:  # any range: its own start, step and length
        v = r.id if isinstance(r, ast.Name) else f"({ast.unparse(r)})"
        n = count or f"len({v})"
        down = f"range({v}.start + ({n} - 1) * {v}.step, {v}.start - {v}.step, -{v}.step)"
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
