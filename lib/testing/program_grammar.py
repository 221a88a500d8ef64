"""The typed grammar behind `programs()`, its statements: assignments, buffers and writes,
branches, loops, schemes (RK4), helpers and closures, drawn over the expressions of
`program_exprs` (which also holds the feature list and the typed environment, `Env`).
"""

from .program_exprs import FEATURES as BASE_FEATURES
from .program_exprs import Env, Expr, ExprGen  # noqa: F401  (Env: for programs.py)
from .program_builtins import BUILTIN_FEATURES, BuiltinStatements
from .program_functions import FUNCTION_FEATURES, FunctionStatements
from .program_lists import LIST_FEATURES, ListStatements
from .program_numpy import NUMPY_FEATURES, NumpyExprs

FEATURES = BASE_FEATURES + NUMPY_FEATURES + LIST_FEATURES + BUILTIN_FEATURES + FUNCTION_FEATURES


class ProgramGen(NumpyExprs, ListStatements, BuiltinStatements, FunctionStatements, ExprGen):
    """One program's drawing state: the hypothesis `draw`, n, features on, names used."""

    def writable(self, env, shape=None, loop_ok=True):
        """Names a statement may assign to (of `shape`, if given)."""
        out = []
        for v, s in env.vars.items():
            if v in env.readonly or (shape is not None and s != shape):
                continue
            if v in env.loopvars and not (loop_ok and "rebind_loop_var" in self.on):
                continue
            out.append(v)
        return sorted(out)

    def target(self, env, shape, top):
        """(name, shape) for an assignment: a new name, or an existing one (same shape in a block)."""
        existing = self.writable(env, None if top and "rebind_param" in self.on else shape)
        if existing and self.draw(self.st.booleans()):
            name = self.draw(self.st.sampled_from(existing))
            if name in env.loopvars:
                self.used.add("rebind_loop_var")
            if env.vars[name] != shape:
                self.used.add("rebind_param")
            return name
        return self.new_name()

    def bind(self, env, name, shape, e):
        """Record `name = e`: its shape, whether it is a fresh writable array, what it aliases."""
        env.vars[name] = shape
        env.ints.pop(name, None)
        env.spd.discard(name)
        env.owned.discard(name)
        if e.view:
            env.owned -= e.names  # `w = u` or `w = u[0]`: u is shared now, no longer writable
        elif shape != ():
            env.owned.add(name)

    def cond(self, env):
        return f"{self.expr(env, (), 1).text} > {self.number(-1.0, 1.0)}"

    def shape_choice(self):
        n = self.n
        return self.draw(self.st.sampled_from([(), (n,), (n, n)]))

    def block(self, env, depth, loop, top=False):
        lines = []
        for _ in range(self.draw(self.st.integers(1, 3 if top else 2))):
            lines += self.statement(env, depth, loop, top)
        return lines

    def nested(self, env, depth, loop, top=False):
        """A block in its own scope: names it creates are not read after it."""
        inner = env.child()
        lines = self.block(inner, depth, loop)
        return ["    " + line for line in lines], inner

    def merge(self, env, *branches):
        """After a branch or loop: writable/SPD only if so on every path."""
        for b in branches:
            env.owned &= b.owned
            env.spd &= b.spd

    def statement(self, env, depth, loop, top):
        mark = len(self.pending)
        lines = self._statement(env, depth, loop, top)
        text = "\n".join(lines)
        for name in self.pending[mark:]:  # walrus targets: bound once the statement ran
            if f"({name} := " in text:  # (a drawn operand the chosen form did not use binds nothing)
                env.vars[name] = ()
        del self.pending[mark:]
        return lines

    def _statement(self, env, depth, loop, top):
        n = self.n
        linalg = any(f in self.on for f in ("solve", "inv", "det", "slogdet", "cholesky"))
        options = [(None, "assign"), ("augassign", "augassign"), ("unpack", "unpack"),
                   ("swap", "swap"), ("nested_targets", "nested_targets"),
                   ("copy_write", "copy"), ("zeros_write", "zeros"), ("empty_write", "empty"),
                   ("subscript_write", "write")]
        options += [(feat, feat) for feat in LIST_FEATURES if feat != "list_concat_chain"]
        options += [(feat, feat) for feat in BUILTIN_FEATURES]
        options += [(feat, feat) for feat in FUNCTION_FEATURES]
        if linalg:
            options.append((None, "spd"))
        if depth > 0 and (not loop or "nested_loops" in self.on):
            options += [("walrus", "walrus_if"), ("if", "if"), ("for_range", "for_range"), ("for_array", "for_array"),
                        ("for_list_of_tuples", "for_tuples"), ("zip", "zip"),
                        ("enumerate", "enumerate"), ("while", "while")]
        if loop:
            options += [("break", "break"), ("continue", "continue")]
        if not self.in_helper:
            options += [("early_return", "return")]
        if top and not self.in_helper:
            options += [("explicit_scheme", "scheme"), ("rk4", "rk4"),
                        ("helper_list_mutation", "list")]
        kind = self.pick(options)
        if loop and kind in ("for_range", "for_array", "for_tuples", "zip", "enumerate", "while"):
            self.used.add("nested_loops")
        edepth = 2 if top else 1
        if kind == "assign":
            shape = self.shape_choice()
            e = self.expr(env, shape, edepth)
            name = self.target(env, shape, top)
            self.bind(env, name, shape, e)
            return [f"{name} = {e.text}"]
        if kind == "augassign":
            names = [v for v in self.writable(env, loop_ok=False) if env.vars[v] == () or v in env.owned]
            if not names:
                return [self.assign_line(env, edepth)]
            name = self.draw(self.st.sampled_from(names))
            shape = env.vars[name]
            env.spd.discard(name)
            op = self.draw(self.st.sampled_from(["+=", "-=", "*=", "/=", "**="]))
            if op == "**=":
                return [f"{name} **= 2"]
            e = self.expr(env, self.draw(self.st.sampled_from([shape, ()])), edepth - 1)
            if op == "/=":
                return [f"{name} /= (2.0 + np.sin({e.text}))"]
            return [f"{name} {op} {e.text}"]
        if kind in ("unpack", "nested_targets"):
            count = 3 if kind == "nested_targets" else 2
            shapes = [self.shape_choice() for _ in range(count)]
            exprs = [self.expr(env, s, edepth - 1) for s in shapes]
            names = []
            for s in shapes:
                name = self.target(env, s, top)
                while name in names:
                    name = self.new_name()
                names.append(name)
            for name, s, e in zip(names, shapes, exprs):
                self.bind(env, name, s, e)
            if kind == "unpack":
                return [f"{names[0]}, {names[1]} = {exprs[0].text}, {exprs[1].text}"]
            return [f"({names[0]}, {names[1]}), {names[2]} = ({exprs[0].text}, {exprs[1].text}), {exprs[2].text}"]
        if kind == "swap":
            pairs = [(a, b) for a in self.writable(env, loop_ok=False) for b in self.writable(env, loop_ok=False)
                     if a < b and (top or env.vars[a] == env.vars[b])]
            if not pairs:
                return [self.assign_line(env, edepth)]
            a, b = self.draw(self.st.sampled_from(pairs))
            env.vars[a], env.vars[b] = env.vars[b], env.vars[a]
            for status in (env.owned, env.spd):
                has_a, has_b = a in status, b in status
                status.discard(a), status.discard(b)
                if has_a:
                    status.add(b)
                if has_b:
                    status.add(a)
            return [f"{a}, {b} = {b}, {a}"]
        if kind == "walrus_if":
            e = self.expr(env, (), 1)
            name = self.new_name("w")
            env.vars[name] = ()
            body, inner = self.nested(env, depth - 1, loop)
            self.merge(env, inner)
            return [f"if ({name} := {e.text}) > {self.number(-1.0, 1.0)}:"] + body
        if kind in ("copy", "zeros", "empty"):
            return self.buffer(env, kind, loop)
        if kind == "write":
            return self.write(env, edepth)
        if kind in LIST_FEATURES:
            return self.list_statement(env, kind)
        if kind in BUILTIN_FEATURES:
            return self.builtin_statement(env, kind)
        if kind in FUNCTION_FEATURES:
            return self.function_statement(env, kind)
        if kind == "spd":
            name = self.new_name("W")
            a = self.expr(env, (n, n), 1).text
            self.bind(env, name, (n, n), Expr("fresh"))
            env.spd.add(name)
            return [f"{name} = np.tanh({a})", f"{name} = {name} @ np.transpose({name}) + {n}.0 * np.eye({n})"]
        if kind == "if":
            lines = [f"if {self.cond(env)}:"]
            body, first = self.nested(env, depth - 1, loop)
            lines += body
            branches = [first]
            while self.chance("elif") and len(branches) < 3:
                mark = len(self.pending)
                test = self.cond(env)
                del self.pending[mark:]  # an elif test may not run
                body, other = self.nested(env, depth - 1, loop)
                lines += [f"elif {test}:"] + body
                branches.append(other)
            if self.draw(self.st.booleans()):
                body, other = self.nested(env, depth - 1, loop)
                lines += ["else:"] + body
                branches.append(other)
            self.merge(env, *branches)
            return lines
        if kind in ("for_range", "for_array", "for_tuples", "zip", "enumerate", "while"):
            return self.loop(env, kind, depth)
        if kind in ("break", "continue"):
            return [f"if {self.cond(env)}:", f"    {kind}"]
        if kind == "return":
            test = self.cond(env)
            mark = len(self.pending)
            value = self.expr(env, self.ret_shape, 1).text
            del self.pending[mark:]  # a walrus in the returned value: nothing reads it after
            return [f"if {test}:", f"    return {value}"]
        if kind == "scheme":
            return self.scheme(env)
        if kind == "rk4":
            return self.rk4(env)
        return self.list_mutation(env)

    def assign_line(self, env, depth):
        e = self.expr(env, (), depth)
        name = self.new_name()
        self.bind(env, name, (), e)
        return f"{name} = {e.text}"

    def copy_of(self, text):
        return f"{text}.copy()" if self.chance("array_methods") else f"np.copy({text})"

    def buffer(self, env, kind, loop):
        """A fresh array (a copy, zeros or empty) filled by subscript writes."""
        n = self.n
        shape = self.draw(self.st.sampled_from([(n,), (n, n)]))
        name = self.new_name("u")
        if kind == "copy":
            source = self.expr(env, shape, 1).text
            first = f"{name} = {self.copy_of(source)}"
        else:
            first = f"{name} = np.{kind}({n if shape == (n,) else (n, n)})"
        if kind != "empty" and self.draw(self.st.booleans()):  # partial writes: zeros/copy only
            self.bind(env, name, shape, Expr("fresh"))
            return [first, f"{name}[{self.index(env)}] = {self.expr(env, shape[1:], 1).text}"]
        index = self.new_name("i")
        inner = env.child()  # before `name` is bound: np.empty's contents are never read
        inner.ints[index] = n
        value = self.expr(inner, shape[1:], 1).text
        self.bind(env, name, shape, Expr("fresh"))
        return [first, f"for {index} in range({n}):", f"    {name}[{index}] = {value}"]

    def write(self, env, depth):
        names = [v for v in sorted(env.owned) if v in env.vars and v not in env.readonly]
        if not names:
            return [self.assign_line(env, depth)]
        name = self.draw(self.st.sampled_from(names))
        shape = env.vars[name]
        env.spd.discard(name)
        if len(shape) == 2 and self.draw(self.st.booleans()):
            index, shape = f"{self.index(env)}, {self.index(env)}", ()
        else:
            index, shape = f"{self.index(env)}", shape[1:]
        op = self.draw(self.st.sampled_from(["=", "+="]))
        return [f"{name}[{index}] {op} {self.expr(env, shape, depth - 1).text}"]

    def loop(self, env, kind, depth):
        n = self.n
        inner = env.child()
        # A matrix positive definite at loop entry may be rebound by the body (a swap, an
        # assignment) before the next iteration reads it: the body only uses those it builds.
        inner.spd = set()
        head, pre = None, []
        if kind == "for_range":
            index = self.new_name("i")
            stop = self.draw(self.st.sampled_from([n, 2, 3]))
            inner.ints[index] = stop
            head = f"for {index} in range({stop}):"
        elif kind == "while":
            counter = self.new_name("k")
            stop = self.draw(self.st.integers(1, 3))
            inner.ints[counter] = None
            inner.readonly.add(counter)
            cond = f"{counter} < {stop}"
            if self.chance("while_value"):
                mark = len(self.pending)
                cond += f" and {self.cond(env)}"
                del self.pending[mark:]  # after `and`, a walrus may not run
            pre = [f"{counter} = 0"]
            head = f"while {cond}:"
        else:
            targets = []
            if kind == "for_tuples":
                shapes = [self.shape_choice() for _ in range(2)]
                items = [[self.expr(env, s, 1) for s in shapes] for _ in range(2)]
                self.unshare(env, inner, [e for pair in items for e in pair])
                pairs = [", ".join(e.text for e in pair) for pair in items]
                iterable = f"[({pairs[0]}), ({pairs[1]})]"
                targets = list(zip([self.new_name("s"), self.new_name("s")], shapes))
            else:
                shapes = [self.draw(self.st.sampled_from([(n,), (n, n)])) for _ in range(2 if kind == "zip" else 1)]
                exprs = [self.expr(env, s, 1) for s in shapes]
                self.unshare(env, inner, exprs)
                exprs = [e.text for e in exprs]
                targets = [(self.new_name("s"), s[1:]) for s in shapes]
                iterable = f"zip({exprs[0]}, {exprs[1]})" if kind == "zip" else \
                    f"enumerate({exprs[0]})" if kind == "enumerate" else exprs[0]
            for name, s in targets:
                inner.vars[name] = s
                inner.loopvars.add(name)
            names = [t[0] for t in targets]
            if kind == "enumerate":
                index = self.new_name("i")
                inner.ints[index] = n
                names = [index] + names
            head = f"for {', '.join(names)} in {iterable}:"
        body = self.block(inner, depth - 1, True)
        if kind == "while":
            body = [f"{pre[0].split(' = ')[0]} += 1"] + body
        self.merge(env, inner)
        return pre + [head] + ["    " + line for line in body]

    def unshare(self, env, inner, exprs):
        """Loop variables may be views of the arrays iterated over: those are no longer writable."""
        for e in exprs:
            env.owned -= e.names
            inner.owned -= e.names

    def scheme(self, env):
        """An explicit finite-difference step: copy, write each u[i] from the old u, rebind."""
        n = self.n
        u, un, t, i = self.new_name("u"), self.new_name("un"), self.new_name("t"), self.new_name("i")
        start = self.expr(env, (n,), 1).text
        c = self.number(0.05, 0.3)
        self.bind(env, u, (n,), Expr("fresh"))
        return [f"{u} = {start} + 0.0",
                f"for {t} in range({self.draw(self.st.integers(1, 3))}):",
                f"    {un} = {self.copy_of(u)}",
                f"    for {i} in range({n}):",
                f"        {un}[{i}] = {u}[{i}] + {c} * ({u}[{i} - 1] - 2.0 * {u}[{i}] + {u}[({i} + 1) % {n}])"
                f" + 0.1 * np.sin({u}[{i}])",
                f"    {u} = {un}"]

    def rk4(self, env):
        """An inline RK4 step: names reassigned several times per iteration, np.stack of subscripts."""
        n = self.n
        names = [v for v in self.writable(env, (n,), loop_ok=False)]
        y = self.draw(self.st.sampled_from(names)) if names and self.draw(self.st.booleans()) else None
        lines = []
        if y is None:
            y = self.new_name("y")
            lines.append(f"{y} = {self.expr(env, (n,), 1).text}")
        templates = ["np.sin({y}[{j}])", "-{y}[{k}]", "0.5 * {y}[{j}] * {y}[{k}]", "np.cos({y}[{k}]) - {y}[{j}]"]
        comps = [self.draw(self.st.sampled_from(templates)) for _ in range(n)]

        def rhs(arg):
            return "np.stack([" + ", ".join(c.format(y=arg, j=(k + 1) % n, k=k) for k, c in enumerate(comps)) + "])"
        k1, k2, k3, k4, yk, t = (self.new_name(p) for p in ("k", "k", "k", "k", "yk", "t"))
        h = self.number(0.05, 0.2)
        self.bind(env, y, (n,), Expr("fresh"))
        return lines + [
            f"for {t} in range({self.draw(self.st.integers(1, 3))}):",
            f"    {k1} = {rhs(y)}", f"    {yk} = {y} + {h} / 2 * {k1}",
            f"    {k2} = {rhs(yk)}", f"    {yk} = {y} + {h} / 2 * {k2}",
            f"    {k3} = {rhs(yk)}", f"    {yk} = {y} + {h} * {k3}",
            f"    {k4} = {rhs(yk)}",
            f"    {y} = {y} + {h} / 6.0 * ({k1} + 2.0 * {k2} + 2.0 * {k3} + {k4})"]

    def list_mutation(self, env):
        """A helper that appends to its list argument, and one that pops from it."""
        if "push" not in self.taken:
            self.taken |= {"push", "take"}
            self.module_lines += ["def push(acc, v):", "    acc.append(v * 1.0)", "", "",
                                  "def take(acc):", "    return acc.pop()", "", ""]
        acc, s = self.new_name("acc"), self.new_name()
        first, second = self.expr(env, (), 1).text, self.expr(env, (), 1).text
        lines = [f"{acc} = [{first}]", f"push({acc}, {second})"]
        if self.draw(self.st.booleans()):
            lines.append(f"{s} = take({acc}) * np.sum(np.stack({acc}))")
        else:
            lines.append(f"{s} = np.sum(np.stack({acc}))")
        self.bind(env, s, (), Expr("fresh"))
        return lines
