"""Refusing subscript writes into arrays that may share memory with another variable.

The transformer differentiates `y[i] = v` as if the write changed `y` only. NumPy writes
through every name that shares `y`'s memory (`y = x`, `y = x[1:]`, `y = x.T`,
`y = np.reshape(x, ...)`, a parameter the caller still holds), so such a write would give a
silently wrong gradient. Before anything else is rewritten, a flow-sensitive pass over the
function's tree tracks, for every name, the bindings that can reach each statement, and
allows `name[...] = value` (and `name[...] += value`) only when

- every binding of `name` reaching the write is a FRESH array: the result of arithmetic,
  a literal, or a call known to return new memory (ufuncs, reductions, matmul,
  concatenate/stack, np.array/np.copy/np.zeros/..., `.copy()`), and
- no other variable reaching the write may share memory with (or hold a reference to) one
  of those bindings (`z = y`, `z = y[1:]`, `pair = (y, 1)`).

Anything it is unsure about (a user function, a call that may return a view) counts as
shared: the refusal names the variable, the write, the binding and the fix (a copy).

Augmented assignment on a whole name, `c += v` (also `-=`, `*=`, `/=`, ...), is differentiated
as `c = c + v`. That is what Python does for floats (immutable), but NumPy writes into the
array `c` in place, so every name sharing it changes too. The pass therefore also tracks
which bindings are surely Python/NumPy scalars, from the argument types of the
specialisation being compiled (`kinds`), and refuses `c op= v` when a binding of `c` that may
be an array is not fresh or is shared by another variable. That refusal depends on the
argument types: `check_writes` returns it (instead of raising) when asked to defer, so the
general (all-array) version built at decoration time can record it while calls with floats
still work.
"""

import builtins

import numpy as np

from ..ir import syntax
from ..calls import opmap
from ..ir.syntax import nodes as n
from .alias_values import (CONTAINER_BUILTINS, FRESH_BUILTINS, FRESH_METHODS, Binding, Value, copy_fix, copy_source,
                           fresh_numpy, is_container, join_values, param_kinds, reaches, same_value, source_text,
                           surely_scalar, target_root, walk)
from .parse import error


class AliasCheck:
    def __init__(self, info, params, api, kinds=None):
        self.info, self.api = info, api
        self.locals = set(params) | {x.id for x in walk(info.node)
                                     if isinstance(x, n.Name) and isinstance(x.ctx, n.Store)}
        where = info.abs_line(info.node)
        self.params = params
        self.bindings = {}  # (id(node), name) -> Binding: one object per assignment, so loops converge
        self.twins = {}  # (id(binding), id(rebound binding)) -> its stale twin (see `stale`)
        self.origin = {}  # id(twin) -> the binding it is a twin of
        self.making = set()  # twins whose refs are being computed
        self.version = 0
        self.deferred = []  # refusals of `c op= v` (they depend on the argument types)
        kinds = param_kinds(info, params, kinds)
        self.start = {p: frozenset([Binding(p, where, "", False, "a parameter: writing into it would change "
                                            "the caller's array", (), scalar=kinds[p] == "scalar")])
                      for p in params}

    # -- resolving call targets (like Normalizer.resolve, before any rewriting) ----------------
    def resolve(self, node):
        return opmap.resolve(node, self.locals, self.info.namespace)

    # -- values ---------------------------------------------------------------------------------
    def refs_of(self, e, state):
        """Bindings of every name read in `e` (what a non-fresh value may share)."""
        out = set()
        for x in walk(e):
            if isinstance(x, n.Name) and isinstance(x.ctx, n.Load):
                out |= state.get(x.id, frozenset())
        return out

    def held(self, e, state):
        """Bindings a fresh value built from `e` holds references to (lists of arrays)."""
        if isinstance(e, (n.List, n.Tuple, n.Set)):
            return self.refs_of(e, state)
        if isinstance(e, n.Dict):
            return self.refs_of(e, state)
        if isinstance(e, n.Name):
            bs = state.get(e.id, frozenset())
            return {b for b in bs if b.container}
        if isinstance(e, n.BinOp):
            return self.held(e.left, state) | self.held(e.right, state)
        return set()

    def value(self, e, state):
        v = self._value(e, state)
        v.scalar = self.scalar(e, state)
        return v

    def scalar(self, e, state):
        """True when `e` surely evaluates to an immutable scalar (see `surely_scalar`)."""
        return surely_scalar(self, e, state)

    def _value(self, e, state):
        if isinstance(e, n.Constant):
            return Value(True)
        if isinstance(e, (n.List, n.Tuple, n.Set, n.Dict)):
            return Value(True, refs=self.held(e, state), container=True)
        if isinstance(e, (n.ListComp, n.SetComp, n.DictComp, n.GeneratorExp)):
            return Value(True, refs=self.refs_of(e, state), container=True)
        if isinstance(e, n.BinOp):
            held = self.held(e, state)
            return Value(True, refs=held, container=bool(held) or is_container(e))
        if isinstance(e, (n.UnaryOp, n.Compare)):
            return Value(True)
        if isinstance(e, n.IfExp):
            a, b = self.value(e.body, state), self.value(e.orelse, state)
            if a.fresh and b.fresh:
                return Value(True, refs=a.refs | b.refs, container=a.container or b.container)
            return a if not a.fresh else b
        if isinstance(e, n.Name):
            return Value(False, f"another name for `{e.id}`", self.refs_of(e, state))
        if isinstance(e, n.Subscript):
            return Value(False, "a subscript (a slice or row is a view of the array)", self.refs_of(e, state))
        if isinstance(e, n.Attribute):
            return Value(False, f"the attribute `.{e.attr}` (e.g. `.T` is a view)", self.refs_of(e, state))
        if isinstance(e, n.Call):
            return self.call_value(e, state)
        return Value(False, f"a {type(e).__name__} expression", self.refs_of(e, state))

    def call_value(self, e, state):
        refs = self.refs_of(e, state)
        if any(k.arg == "out" for k in e.keywords):
            return Value(False, "a call with `out=` (it returns the `out` array)", refs)
        if any(k.arg == "copy" and not (isinstance(k.value, n.Constant) and k.value.value is True)
               for k in e.keywords):
            return Value(False, "a call with `copy=` (it may return its argument)", refs)
        func = e.func
        obj = self.resolve(func)
        shown = source_text(func)
        if obj is None and isinstance(func, n.Attribute):  # a method of a local value
            if func.attr in FRESH_METHODS:
                return Value(True)
            return Value(False, f"`.{func.attr}(...)`, which may return a view", refs)
        if obj is not None:
            try:
                if obj in FRESH_BUILTINS:
                    return Value(True)
                if obj in CONTAINER_BUILTINS:
                    return Value(True, refs=refs, container=True)
            except TypeError:  # unhashable
                pass
            if fresh_numpy(obj):
                return Value(True)
        if obj is not None and opmap.is_user_function(obj):
            return Value(False, f"the result of `{shown}(...)`, which may return its argument", refs)
        return Value(False, f"the result of `{shown}(...)`, which may return a view", refs)

    # -- statements -----------------------------------------------------------------------------
    def run(self):
        self.block(self.info.node.body, dict(self.start))

    def bind(self, target, value, node, state):
        line, text = self.info.abs_line(node), self.info.line_text(node)
        if isinstance(target, n.Name):
            key = (id(node), target.id)
            b = self.bindings.get(key)
            if b is None:
                b = self.bindings[key] = Binding(target.id, line, text, value.fresh, value.why,
                                                 value.refs, value.container, value.scalar)
                self.version += 1
            if value.fresh:  # new memory at every run of this line: what the name held before is another object
                value.refs = {self.stale(r, b) if r is b or reaches(r, {b}) else r for r in value.refs}
                self.outdate(b, state)
            if (not value.refs <= b.refs or (b.fresh and not value.fresh) or (value.container and not b.container)
                    or (b.scalar and not value.scalar)):
                b.refs |= value.refs
                b.container = b.container or value.container
                b.scalar = b.scalar and value.scalar
                if b.fresh and not value.fresh:
                    b.fresh, b.why = False, value.why
                self.version += 1
            state[target.id] = frozenset([b])
        elif isinstance(target, (n.Tuple, n.List)):
            for t in target.elts:
                if isinstance(t, n.Starred):
                    t = t.value
                self.bind(t, Value(False, "an element unpacked from a sequence", value.refs), node, state)
        elif isinstance(target, n.Subscript):
            self.write(target, node, state)
            if value.refs and isinstance(target_root(target), n.Name):  # `xs[0] = y`: xs now holds y
                for b in state.get(target_root(target).id, frozenset()):
                    if not value.refs <= b.refs or not b.container:
                        b.refs |= value.refs
                        b.container = True
                        self.version += 1

    def outdate(self, b, state):
        """A fresh array is bound at `b`'s line again (the next loop step): other names that still
        reach `b` hold the array of an earlier run, never the new one (so `un = u.copy();
        un[i] = ...; u = un` is no write into memory `u` shares)."""
        for other, obs in state.items():
            if any(ob is b or reaches(ob, {b}) for ob in obs):
                state[other] = frozenset(self.stale(ob, b) if ob is b or reaches(ob, {b}) else ob for ob in obs)

    def stale(self, ob, b):
        """`ob` as it was before the latest run of `b`'s line: a twin reaching `b`'s earlier arrays
        (one twin per pair, kept up to date, so the fixpoint converges)."""
        ob = self.origin.get(id(ob), ob)  # a twin's twin is the twin: finitely many, so loops converge
        key = (id(ob), id(b))
        twin = self.twins.get(key)
        if twin is None:
            twin = self.twins[key] = Binding(ob.name, ob.line, ob.text, ob.fresh, ob.why, (), ob.container, ob.scalar)
            self.origin[id(twin)] = ob
            self.version += 1
        if key in self.making:  # refs that cycle back (`xs[0] = ys` while ys holds xs)
            return twin
        self.making.add(key)
        refs = {r if r is not b and not reaches(r, {b}) else self.stale(r, b) for r in ob.refs} if ob is not b else set(
            ob.refs)
        self.making.discard(key)
        if not refs <= twin.refs or (twin.fresh and not ob.fresh) or (ob.container and not twin.container):
            twin.refs |= refs
            twin.container = twin.container or ob.container
            twin.fresh, twin.why = twin.fresh and ob.fresh, ob.why if not ob.fresh else twin.why
            self.version += 1
        return twin

    def write(self, target, node, state):
        root = target_root(target)
        if not isinstance(root, n.Name):
            return
        name = root.id
        where = f"`{source_text(target)} = ...` writes into `{name}`"
        if name not in self.locals:
            raise error(self.api, self.info, node,
                        f"{where}, a global or closure array, which the caller may share",
                        f"Make a copy first: {name}_copy = {name}.copy(), and write into the copy.")
        bindings = state.get(name, frozenset())
        for b in sorted(bindings, key=lambda b: b.line):
            if not b.fresh:
                source = (f"`{name}` is {b.why}" if b.name in self.params and not b.text
                          else f"its binding at line {b.line} (`{b.text}`) is {b.why}")
                raise error(self.api, self.info, node,
                            f"{where}, which may share memory with another array: {source}; the "
                            "transformer would differentiate the write as if it changed "
                            f"`{name}` only",
                            f"Make a copy first: {copy_fix(name, b)}, then write into the copy.")
        for other, obs in state.items():
            if other == name:
                continue
            for ob in obs:
                if reaches(ob, bindings):
                    raise error(self.api, self.info, node,
                                f"{where}, but `{other}` (line {ob.line}: `{ob.text}`) may share memory "
                                f"with `{name}` or hold a reference to it, and would change too",
                                f"Make a copy first: {other} = {copy_source(ob)} (or copy `{name}`), "
                                "so no other variable sees the write.")

    def augment(self, s, state):
        """`c op= v` on a name: in place when `c` is an array, a rebinding when it is a scalar."""
        name = s.target.id
        bindings = state.get(name, frozenset())
        arrays = {b for b in bindings if not b.scalar}
        rebuilt = syntax.unparse(n.BinOp(left=syntax.name(name), op=s.op, right=s.value))
        where = (f"`{source_text(s)}` writes into `{name}` in place when it is an array, but the transformer "
                 f"differentiates it as `{name} = {rebuilt}`")
        refusal = None
        for b in sorted(arrays, key=lambda b: b.line):
            if not b.fresh:
                source = (f"`{name}` is {b.why}" if b.name in self.params and not b.text
                          else f"its binding at line {b.line} (`{b.text}`) is {b.why}")
                copy = f"{name} = {name}.copy()" if not b.text else copy_fix(name, b)
                refusal = (f"{where}; `{name}` may share memory with another array: {source}",
                           f"Write {name} = {rebuilt} to make a new array, or copy first: {copy}.")
                break
        if refusal is None:
            for other, obs in sorted(state.items()):
                hit = next((ob for ob in sorted(obs, key=lambda b: b.line)
                            if other != name and reaches(ob, arrays)), None)
                if hit is not None:
                    what = (f"{where}; `{other}` (line {hit.line}: `{hit.text}`) may share memory "
                            f"with `{name}` or hold a reference to it, and would change too")
                    fix = f"Write {name} = {rebuilt} to make a new array, or copy first: {other} = {copy_source(hit)}."
                    refusal = (what, fix)
                    break
        if refusal is not None:
            self.deferred.append(error(self.api, self.info, s, *refusal))
        value = self.value(n.BinOp(left=syntax.name(name), op=s.op, right=s.value), state)
        held = self.held(s.value, state) if isinstance(s.value, (n.List, n.Tuple, n.Name)) else set()
        for b in arrays:  # in place: `xs += [y]` makes the list hold y
            if held and (not held <= b.refs or not b.container):
                b.refs |= held
                b.container = True
                self.version += 1
        if len(arrays) < len(bindings):  # a scalar `c`: a new object, fresh
            self.bind(s.target, Value(True, refs=value.refs, container=value.container, scalar=value.scalar),
                      s, state)
            state[name] = state[name] | frozenset(arrays)

    def block(self, stmts, state):
        for s in stmts:
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state):
        state = dict(state)
        if isinstance(s, (n.Assign, n.AnnAssign)):
            targets = s.targets if isinstance(s, n.Assign) else [s.target]
            if s.value is None:
                return state
            if (len(targets) == 1 and isinstance(targets[0], (n.Tuple, n.List))
                    and isinstance(s.value, (n.Tuple, n.List)) and len(targets[0].elts) == len(s.value.elts)
                    and not any(isinstance(x, n.Starred) for x in targets[0].elts + s.value.elts)):
                # `c, d = a * b, a + b`: each name gets its own value (all read before any is bound)
                values = [self.value(e, state) for e in s.value.elts]
                for t, v in zip(targets[0].elts, values):
                    self.bind(t, v, s, state)
                return state
            value = self.value(s.value, state)
            if len(targets) > 1:  # `a = b = expr`: the names share one array
                value = Value(False, "bound together with other names in one chained assignment",
                               value.refs)
            for t in targets:
                self.bind(t, value, s, state)
            return state
        if isinstance(s, n.AugAssign):
            if isinstance(s.target, n.Subscript):
                self.write(s.target, s, state)
            elif isinstance(s.target, n.Name):
                self.augment(s, state)
            return state
        if isinstance(s, n.If):
            a = self.block(s.body, state)
            b = self.block(s.orelse, state)
            return join_values(a, b)
        if isinstance(s, (n.For, n.While)):
            entry = state
            while True:
                version = self.version
                inner = dict(entry)
                if isinstance(s, n.For):
                    iterable = s.iter
                    obj = self.resolve(iterable.func) if isinstance(iterable, n.Call) else None
                    if obj is builtins.range:
                        value = Value(True)
                    else:
                        value = Value(False, "a loop variable (an element or row of the sequence, "
                                       "often a view)", self.refs_of(iterable, inner))
                    self.bind(s.target, value, s, inner)
                after = self.block(s.body, inner)
                joined = join_values(entry, after)
                if same_value(joined, entry) and self.version == version:
                    # `for i in range(2)` runs its body: what the last pass leaves, not the entry too
                    return after if self.runs(s) else joined
                entry = joined
        return state

    def runs(self, s):
        """True for a loop whose every pass runs its whole body, at least once: `for ... in
        range(...)` of positive length with constant bounds, no `break` or `continue`, no `else`."""
        it = s.iter if isinstance(s, n.For) else None
        if not (isinstance(it, n.Call) and self.resolve(it.func) is builtins.range and not it.keywords
                and it.args and all(isinstance(a, n.Constant) and type(a.value) is int for a in it.args)
                and not s.orelse and not any(isinstance(x, (n.Break, n.Continue)) for x in walk(s))):
            return False
        try:
            return len(range(*(a.value for a in it.args))) > 0
        except (TypeError, ValueError):
            return False


def check_writes(info, params, api, kinds=None, defer=False):
    """Raise TransformError for a write into an array that may share memory.

    `kinds` maps parameters to "scalar" or "array" (missing: from the default value, else
    "array"). A refusal of `c op= v` holds for these argument types only: with `defer`, the
    first one is returned (subscript-write refusals still raise); else it is raised.
    """
    if info.filename.startswith("<dualtape "):  # generated adjoint code read back (hvp)
        return None
    check = AliasCheck(info, params, api, kinds)
    check.run()
    if check.deferred and not defer:
        raise check.deferred[0]
    return check.deferred[0] if check.deferred else None


