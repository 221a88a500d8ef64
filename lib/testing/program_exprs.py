"""The typed grammar behind `programs()`, its expressions: over scalars, n-vectors and n x n
matrices (`program_grammar` adds the statements).

Every variable's shape is known while drawing, so every program is valid Python on plain
floats and arrays. What a statement may do is tracked in `Env`: subscript writes and
in-place `+=` only go into fresh arrays that nothing else shares (`owned`), so a program
never writes into its inputs and its NumPy semantics do not depend on aliasing; linalg only
sees matrices `tanh(A) tanh(A)^T + n I` (`spd`: condition number at most 2). Every function
used is smooth on all of R (divisions by `2 + sin(.)` or `1 + e*e`, `log(1 + e*e)`,
`exp(tanh(.))`), so finite differences are valid away from branch thresholds.
"""

from dataclasses import dataclass, field

# Every construct the grammar can draw, by feature name. `programs(exclude=...)` leaves some
# out; `Program.features` says which ones a program uses.
FEATURES = (
    "augassign", "unpack", "swap", "nested_targets", "walrus", "if", "elif", "ifexp",
    "for_range", "for_array", "for_list_of_tuples", "zip", "enumerate", "while",
    "while_value", "break", "continue", "early_return", "nested_loops", "subscript_read",
    "slice", "subscript_write", "copy_write", "zeros_write", "empty_write", "return_buffer", "explicit_scheme",
    "rk4", "math", "reductions", "keepdims", "matmul", "dot", "outer", "einsum", "stack",
    "concatenate", "reshape", "transpose", "array_methods", "solve", "inv", "det", "slogdet", "cholesky",
    "constants", "helper", "helper_list_mutation", "closure", "rebind_param",
    "rebind_loop_var", "generated_names", "scalar_inputs", "matrix_inputs", "array_output",
)

# User names that look like the transformer's own (adjoints, tangents, stacks, temporaries).
GENERATED_LOOKING = ("_stack", "bx", "_t1", "dx", "by", "_cond1", "_b1", "bout", "dy",
                     "_dstack", "out", "bw", "_mul_x_y", "b_t1", "d_t1", "ba", "_t2", "_sin_x")

UNARY = ("np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))", "np.log(1.0 + {0} * {0})",
         "np.sqrt(1.0 + {0} * {0})", "np.arctan({})", "({} ** 2)")
MATH_UNARY = ("math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))",
              "math.log(1.0 + {0} * {0})", "math.sqrt(1.0 + {0} * {0})", "math.atan({})")
BINARY = ("({} + {})", "({} - {})", "({} * {})", "({} / (2.0 + np.sin({})))", "({0} / (1.0 + {1} * {1}))")


@dataclass(frozen=True)
class Expr:
    text: str
    view: bool = False  # may share memory with a variable it reads (a name, subscript, .T, ...)
    names: frozenset = frozenset()


@dataclass
class Env:
    """The variables a statement may read: name -> shape, plus what each one allows."""
    vars: dict = field(default_factory=dict)      # name -> () | (n,) | (n, n)
    ints: dict = field(default_factory=dict)      # int name -> exclusive upper bound
    readonly: set = field(default_factory=set)    # constants, closure variables
    loopvars: set = field(default_factory=set)
    owned: set = field(default_factory=set)       # fresh arrays nothing else shares: writable
    spd: set = field(default_factory=set)         # symmetric positive definite matrices

    def child(self):
        return Env(dict(self.vars), dict(self.ints), set(self.readonly), set(self.loopvars),
                   set(self.owned), set(self.spd))


class ExprGen:
    """One program's drawing state (the hypothesis `draw`, n, features on, names used) and its
    expressions; `program_grammar.ProgramGen` adds the statements and mixes in `numpy_options` and
    `numpy_expr` (program_numpy.py: NumPy's further functions and compositions)."""

    def __init__(self, draw, n, features):
        from hypothesis import strategies as st  # here: hypothesis is an optional test dependency
        self.st, self.draw, self.n, self.on = st, draw, n, features
        self.used, self.counter, self.helpers, self.module_lines = set(), 0, [], []
        self.ret_shape, self.in_helper = (), False
        self.taken = set()
        self.pending = []  # walrus targets of the statement being drawn

    # -- choices (the first option is the simplest: hypothesis shrinks towards it) ---------------
    def pick(self, options):
        """options: (feature or None, value); only enabled ones; records the feature used."""
        options = [(feat, v) for feat, v in options if feat is None or feat in self.on]
        feat, value = self.draw(self.st.sampled_from(options))
        if feat is not None:
            self.used.add(feat)
        return value

    def chance(self, feature):
        if feature not in self.on or not self.draw(self.st.booleans()):
            return False
        self.used.add(feature)
        return True

    def number(self, low=0.1, high=2.0):
        return repr(round(self.draw(self.st.floats(low, high, allow_nan=False)), 3))

    def index(self, env):
        """An index into an axis of length n: a literal, or an int loop variable below n."""
        ints = sorted(i for i, bound in env.ints.items() if bound is not None and bound <= self.n)
        if ints and self.draw(self.st.booleans()):
            return self.draw(self.st.sampled_from(ints))
        return self.draw(self.st.integers(0, self.n - 1))

    def new_name(self, prefix="a"):
        if self.chance("generated_names"):
            name = self.draw(self.st.sampled_from(GENERATED_LOOKING))
            if name not in self.taken:
                self.taken.add(name)
                return name
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- expressions -------------------------------------------------------------------------------
    def shapes(self):
        n = self.n
        return [(), (n,), (n, n)]

    def expr(self, env, shape, depth):
        n = self.n
        names = [v for v, s in env.vars.items() if s == shape and v not in env.readonly]
        if shape == ():
            names += list(env.ints)
        options = [(None, "leaf")] if names else []
        options += [(None, "const")]
        if depth > 0:
            options += [(None, "unary"), (None, "binary"), ("math", "math"), ("ifexp", "ifexp"),
                        ("helper", "call")]
            if shape == ():
                options += [("subscript_read", "sub"), ("reductions", "sum"), ("dot", "dot"),
                            ("matmul", "vmatv"), ("det", "det"), ("slogdet", "slogdet"),
                            ("walrus", "walrus")]
            elif shape == (n,):
                options += [("matmul", "matvec"), ("dot", "dot"), ("einsum", "einsum"),
                            ("reductions", "axis"), ("subscript_read", "row"), ("stack", "stack"),
                            ("concatenate", "roll"), ("solve", "solve"), ("reshape", "reshape"),
                            ("slice", "col")]
            else:
                options += [("matmul", "matmul"), ("outer", "outer"), ("einsum", "einsum"),
                            ("transpose", "T"), ("stack", "stack"), ("inv", "inv"),
                            ("cholesky", "cholesky"), ("keepdims", "keepdims"), ("reshape", "reshape"),
                            ("concatenate", "roll")]
            more = self.numpy_options(shape)
            options += [(None, "numpy")] * 4 if more else []
        kind = self.pick(options)
        sub = lambda s: self.expr(env, s, depth - 1)  # noqa: E731
        if kind == "leaf":
            name = self.draw(self.st.sampled_from(sorted(names)))
            return Expr(name, view=shape != (), names=frozenset([name]))
        if kind == "const":
            return self.const(env, shape)
        if kind == "math" and shape != ():
            kind = "unary"
        if kind in ("unary", "math"):
            a = sub(shape)
            template = self.draw(self.st.sampled_from(MATH_UNARY if kind == "math" else UNARY))
            return Expr(template.format(a.text), names=a.names)
        if kind == "binary":
            a, b = sub(shape), sub(self.draw(self.st.sampled_from([shape, ()])))
            if self.draw(self.st.booleans()):
                a, b = b, a
            return Expr(self.draw(self.st.sampled_from(BINARY)).format(a.text, b.text), names=a.names | b.names)
        if kind == "ifexp":
            mark = len(self.pending)
            a, b, c = sub(shape), sub(shape), sub(())
            del self.pending[mark:]  # a walrus in a branch may not run
            return Expr(f"({a.text} if {c.text} > {self.number(-1.0, 1.0)} else {b.text})",
                        view=a.view or b.view, names=a.names | b.names | c.names)
        if kind == "call":
            return self.call(env, shape, depth)
        if kind == "numpy":  # parenthesized: a subscript or ** may follow (`(w ** 2)[0]`)
            e = self.numpy_expr(env, shape, self.pick(more), sub)
            return Expr(f"({e.text})", view=e.view, names=e.names)
        if kind == "walrus":
            a = sub(())
            name = self.new_name("w")
            self.pending.append(name)  # readable once the statement has run (see `commit`)
            return Expr(f"(({name} := {a.text}) * {name})", names=a.names)
        return self.structured(env, shape, depth, kind, sub)

    def structured(self, env, shape, depth, kind, sub):
        n = self.n
        v, m = (n,), (n, n)
        i = self.index(env)
        if kind == "sub":
            s = self.draw(self.st.sampled_from([v, m]))
            a = sub(s)
            i, j = self.index(env), self.index(env)
            return Expr(f"{a.text}[{i}]" if s == v else f"{a.text}[{i}, {j}]", names=a.names)
        if kind == "sum":
            a = sub(self.draw(self.st.sampled_from([v, m])))
            return Expr(f"np.{self.draw(self.st.sampled_from(['sum', 'mean']))}({a.text})", names=a.names)
        if kind == "dot" and shape == ():
            a, b = sub(v), sub(v)
            return Expr(f"np.dot({a.text}, {b.text})", names=a.names | b.names)
        if kind == "vmatv":
            a, b = sub(v), sub(v)
            return Expr(f"({a.text} @ {b.text})", names=a.names | b.names)
        if kind in ("det", "slogdet", "solve", "inv", "cholesky"):
            spd = self.spd_matrix(env, depth)
            if kind == "det":
                return Expr(f"np.linalg.det({spd})")
            if kind == "slogdet":
                return Expr(f"np.linalg.slogdet({spd})[1]")
            if kind == "inv":
                return Expr(f"np.linalg.inv({spd})")
            if kind == "cholesky":
                return Expr(f"np.linalg.cholesky({spd})")
            b = sub(v)
            return Expr(f"np.linalg.solve({spd}, {b.text})", names=b.names)
        if kind in ("matvec", "dot", "matmul", "einsum"):
            a = sub(m)
            if kind == "einsum":
                b = sub(shape)
                spec = "'ij,j->i'" if shape == v else "'ij,jk->ik'"
                return Expr(f"np.einsum({spec}, {a.text}, {b.text})", names=a.names | b.names)
            b = sub(shape)
            text = f"np.dot({a.text}, {b.text})" if kind == "dot" else f"({a.text} @ {b.text})"
            return Expr(text, names=a.names | b.names)
        if kind == "axis":
            a = sub(m)
            how = self.draw(self.st.sampled_from(["sum", "mean"]))
            return Expr(f"np.{how}({a.text}, axis={self.draw(self.st.integers(0, 1))})", names=a.names)
        if kind == "row":
            a = sub(m)
            return Expr(f"{a.text}[{i}]", view=True, names=a.names)
        if kind == "col":
            a = sub(m)
            return Expr(f"{a.text}[:, {i}]", view=True, names=a.names)
        if kind == "stack":
            parts = [sub(shape[1:]) for _ in range(n)]
            names = frozenset().union(*[p.names for p in parts])
            return Expr(f"np.stack([{', '.join(p.text for p in parts)}])", names=names)
        if kind == "roll":
            a = sub(shape)
            k = self.draw(self.st.integers(1, n - 1))
            axis = self.draw(self.st.integers(0, len(shape) - 1))
            lo, hi = (f"{a.text}[{k}:]", f"{a.text}[:{k}]") if axis == 0 else \
                (f"{a.text}[:, {k}:]", f"{a.text}[:, :{k}]")
            self.used.add("slice")
            return Expr(f"np.concatenate([{lo}, {hi}]{', axis=1' if axis else ''})", names=a.names)
        if kind == "reshape":
            if shape == v:
                a = sub(m)
                return Expr(f"np.reshape({a.text}, ({n * n},))[:{n}]", view=True, names=a.names)
            a = sub(m)
            return Expr(f"np.reshape(np.transpose({a.text}), ({n}, {n}))", view=True, names=a.names)
        if kind == "outer":
            a, b = sub(v), sub(v)
            return Expr(f"np.outer({a.text}, {b.text})", names=a.names | b.names)
        if kind == "T":
            a = sub(m)
            if self.chance("array_methods"):
                return Expr(f"{a.text}.T", view=True, names=a.names)
            return Expr(f"np.transpose({a.text})", view=True, names=a.names)
        if kind == "keepdims":
            a, b = sub(m), sub(m)
            how = self.draw(self.st.sampled_from(["sum", "mean"]))
            self.used.add("reductions")
            return Expr(f"({a.text} * np.{how}({b.text}, axis={self.draw(self.st.integers(0, 1))}, "
                        f"keepdims=True))", names=a.names | b.names)
        raise AssertionError(kind)

    def const(self, env, shape):
        n = self.n
        consts = [c for c, s in env.vars.items() if s == shape and c in env.readonly]
        if consts and self.chance("constants"):
            name = self.draw(self.st.sampled_from(sorted(consts)))
            return Expr(name, view=shape != (), names=frozenset([name]))
        if shape == ():
            return Expr(self.number())
        lo, hi = self.number(-1.0, 1.0), self.number(-1.0, 1.0)
        if shape == (n,):
            return Expr(f"np.linspace({lo}, {hi}, {n})")
        return Expr(f"np.linspace({lo}, {hi}, {n * n}).reshape({n}, {n})")

    def spd_matrix(self, env, depth):
        """A well-conditioned SPD matrix: an SPD variable, or tanh(A) tanh(A)^T + n I inline."""
        spd = sorted(env.spd)
        if spd and self.draw(self.st.booleans()):
            return self.draw(self.st.sampled_from(spd))
        a = self.expr(env, (self.n, self.n), 0).text  # a name or constant: written out twice
        return f"(np.tanh({a}) @ np.transpose(np.tanh({a})) + {self.n}.0 * np.eye({self.n}))"

    def call(self, env, shape, depth):
        fitting = [h for h in self.helpers if h[2] == shape]
        if not fitting or self.in_helper:
            return self.expr(env, shape, 0)
        name, params, _ = self.draw(self.st.sampled_from(fitting))
        self.used.add("helper")
        args = [self.expr(env, s, depth - 1) for s in params]
        return Expr(f"{name}({', '.join(a.text for a in args)})", view=True,
                    names=frozenset().union(*[a.names for a in args]))
