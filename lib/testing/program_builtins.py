"""Python's builtins and `math` in `programs()`: `sum` of a list, an array, a generator or a
comprehension (with `start`), `min` / `max` of an iterable or of several values, `sorted`,
`abs`, loops over `enumerate(zip(...), start)` and `reversed(...)` (the `builtins` feature),
`math`'s functions of floats (`math_module`), and calls of a helper with `*args` / `**kwargs`,
spread or not (`star_args`). The transformer writes them out as loops and
registry ops (transforms/calls/builtins.py); the tape runs them as Python does, so the modes
agree only if each rewrite keeps Python's semantics.

Each draws one or a few statements binding a new variable (not a typed expression of its own:
min, max and sorted compare, so their operands are floats).
"""

from .program_exprs import Expr

BUILTIN_FEATURES = ("builtins", "math_module", "star_args")

# a module-level helper with *args and **kwargs (the star_args feature calls it)
_STAR_HELPER = ["def star_mix(first, *rest, **options):", "    total = first",
                "    for r in rest:", "    " * 2 + "total = total * options['decay'] + np.sin(r)",
                "    return total + len(rest) * options['decay']", "", ""]

# math functions of one float, each with the argument form that keeps it in its smooth domain
# (and in range: gamma, exp2, expm1 and pow of a large argument overflow, which math raises)
_MATH_UNARY = ("math.log2(1.5 + {a} * {a})", "math.log10(1.5 + {a} * {a})", "math.erf({a})",
               "math.erfc({a})", "math.expm1(math.tanh({a}))", "math.log1p({a} * {a})", "math.exp2(math.tanh({a}))",
               "math.cbrt(2.0 + {a} * {a})", "math.gamma(1.5 + math.tanh({a}) ** 2)",
               "math.lgamma(1.5 + {a} * {a})", "math.atan({a})", "math.sqrt(1.0 + {a} * {a})")
_MATH_BINARY = ("math.hypot({a}, 1.0 + {b} * {b})",  # (hypot(0, 0) has no derivative)
                "math.atan2({a}, 2.0 + {b} * {b})", "math.pow(1.5 + {a} * {a}, math.tanh({b}))",
                "math.prod([{a}, {b}])", "math.dist([{a}, {b}], [{b}, 0.5])",
                "math.log(1.5 + {a} * {a}, 2.0 + {b} * {b})", "math.degrees({a}) * math.radians({b})")


class BuiltinStatements:
    """Mixed into `ProgramGen`: `builtin_statement(env, kind)` for the kinds of `BUILTIN_FEATURES`."""

    def _vector(self, env):
        vectors = sorted(v for v, s in env.vars.items() if s == (self.n,))
        if vectors and self.draw(self.st.booleans()):
            return self.draw(self.st.sampled_from(vectors))
        return f"({self.expr(env, (self.n,), 1).text})"

    def builtin_statement(self, env, kind):
        name = self.new_name("r")
        if kind == "math_module":
            a, b = self.expr(env, (), 1).text, self.expr(env, (), 1).text
            form = self.draw(self.st.sampled_from(_MATH_UNARY + _MATH_BINARY))
            self.bind(env, name, (), Expr("fresh"))
            return [f"{name} = {form.format(a=a, b=b)}"]
        shape = self.shape_choice()
        if kind == "star_args":
            if _STAR_HELPER[0] not in self.module_lines:
                self.module_lines += _STAR_HELPER
            a, b, c = (self.expr(env, shape, 1).text for _ in range(3))
            d = self.expr(env, (), 1).text
            form = self.draw(self.st.sampled_from([
                f"star_mix({a}, {b}, {c}, decay={d})", f"star_mix(*[{a}, {b}], decay=0.5 * {d})",
                f"star_mix({a}, **{{'decay': {d}}})", f"star_mix({a}, *({b}, {c}), **{{'decay': 0.7}})"]))
            self.bind(env, name, shape, Expr("fresh"))
            return [f"{name} = {form}"]
        form = self.draw(self.st.integers(0, 7))
        if form == 0:  # sum of a list display, start or not
            items = ", ".join(self.expr(env, shape, 1).text for _ in range(self.draw(self.st.integers(1, 3))))
            start = f", {self.expr(env, shape, 1).text}" if self.draw(self.st.booleans()) else ""
            text, out = f"sum([{items}]{start})", shape
        elif form == 1:  # sum of an array: along axis 0
            text, out = self.draw(self.st.sampled_from([(f"sum({self._vector(env)})", ()),
                                                         (f"sum({self.expr(env, (self.n, self.n), 1).text})",
                                                          (self.n,))]))
        elif form == 2:  # sum of a generator or comprehension over a vector
            v = self.new_name("v")
            inner = env.child()
            inner.vars[v] = ()
            item = self.expr(inner, shape, 1).text
            seq = self._vector(env)
            if self.draw(self.st.booleans()):
                text = f"sum({item} * {v} for {v} in {seq})"
            else:
                text = f"sum([{item} * {v} for {v} in {seq} if {v} > -0.5], {self.expr(env, shape, 1).text})"
            out = shape
        elif form == 3:  # min / max of an iterable or of three floats
            fn = self.draw(self.st.sampled_from(["min", "max"]))
            if self.draw(self.st.booleans()):
                text = f"{fn}({self._vector(env)})"
            else:
                text = f"{fn}({', '.join(self.expr(env, (), 1).text for _ in range(3))})"
            out = ()
        elif form == 4:  # sorted floats: the derivative follows the permutation
            ys = self.new_name("ys")
            items = ", ".join(self.expr(env, (), 1).text for _ in range(3))
            reverse = ", reverse=True" if self.draw(self.st.booleans()) else ""
            self.bind(env, name, (), Expr("fresh"))
            return [f"{ys} = sorted([{items}]{reverse})", f"{name} = {ys}[0] * {ys}[2] + np.sin({ys}[1])"]
        elif form == 5:  # abs
            text, out = f"abs({self.expr(env, (), 1).text})", ()
        else:  # loops: enumerate(zip(...), start), reversed
            i, a, b = self.new_name("i"), self.new_name("a"), self.new_name("b")
            inner = env.child()
            inner.vars[a], inner.vars[b] = (), ()
            step = self.expr(inner, (), 1).text
            x, y = self._vector(env), self._vector(env)
            self.bind(env, name, (), Expr("fresh"))
            if form == 6:
                start = self.draw(self.st.integers(0, 2))
                return [f"{name} = 0.0", f"for {i}, ({a}, {b}) in enumerate(zip({x}, {y}), {start}):",
                        f"    {name} = {name} * 0.5 + {i} * {a} * {b} + {step}"]
            return [f"{name} = 0.0", f"for {a}, {b} in zip(reversed({x}), {y}):",
                    f"    {name} = {name} * 0.5 + {a} * {b} + {step}"]
        self.bind(env, name, out, Expr("fresh"))
        return [f"{name} = {text}"]
