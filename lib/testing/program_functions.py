"""Functions as values in `programs()`: nested functions reading the program's variables
(closures, called at once or twice), lambdas (assigned or called in place), functions passed
to a nested function (NumPy's, a lambda, a nested one), loops over a tuple of functions, and
`map` of such functions inside expressions (`sum(map(g, [a, b]))`, `np.stack(list(map(...)))`),
and nested generators consumed by a loop, `sum` or `list` (read as the list they yield).
The transformer lifts nested functions and lambdas and specializes on function values
(transforms/frontend/functions.py).

A nested function's body is an expression of its parameter and the variables it closes over;
what it returns is bound to a new variable of the parameter's shape.
"""

from .program_exprs import Expr

FUNCTION_FEATURES = ("nested_def", "lambda", "function_arg", "function_loop", "map_call", "generator")

_UNARY = ("np.sin", "np.tanh", "np.cos")


class FunctionStatements:
    """Mixed into `ProgramGen`: `function_statement(env, kind)` for `FUNCTION_FEATURES`."""

    def function_body(self, env, param, shape, closure=True):
        """An expression of `param` (of `shape`) and, with `closure`, the variables of `env`."""
        inner = env.child() if closure else type(env)()
        inner.vars[param] = shape
        inner.owned.discard(param)
        saved, helper = self.on, self.in_helper
        self.on, self.in_helper = set(saved) - {"walrus"}, True  # (a walrus would bind in the function)
        try:
            body = self.expr(inner, shape, 1).text
        finally:
            self.on, self.in_helper = saved, helper
        return body if param in body else f"{param} * ({body})"

    def function_statement(self, env, kind):
        shape = self.shape_choice()
        out = self.new_name("r")
        args = [self.expr(env, shape, 1).text for _ in range(2)]
        if kind == "nested_def":
            g, v = self.new_name("g"), self.new_name("v")
            lines = [f"def {g}({v}):", f"    return {self.function_body(env, v, shape)}"]
            call = self.draw(self.st.sampled_from([f"{g}({args[0]})", f"{g}({args[0]}) * {g}({args[1]})",
                                                   f"{g}({g}({args[0]}) * 0.5)"]))
            lines.append(f"{out} = {call}")
        elif kind == "lambda":
            v = self.new_name("v")
            lam = f"lambda {v}: {self.function_body(env, v, shape)}"
            if self.draw(self.st.booleans()):
                h = self.new_name("h")
                lines = [f"{h} = {lam}", f"{out} = {h}({args[0]}) + {h}({args[1]})"]
            else:
                lines = [f"{out} = ({lam})({args[0]})"]
        elif kind == "function_arg":
            apply, fn, v = self.new_name("apply"), self.new_name("fn"), self.new_name("v")
            lines = [f"def {apply}({fn}, {v}):", f"    return {fn}({v}) * {self.function_body(env, v, shape)}"]
            t = self.new_name("t")
            passed = [self.draw(self.st.sampled_from(_UNARY)),
                      f"lambda {t}: {self.function_body(env, t, shape, closure=False)}"]
            first, second = self.draw(self.st.permutations(passed))
            lines.append(f"{out} = {apply}({first}, {args[0]}) + {apply}({second}, {args[1]})")
        elif kind == "map_call":
            g, v, p, q = self.new_name("g"), self.new_name("v"), self.new_name("p"), self.new_name("q")
            lines = [f"def {g}({v}):", f"    return {self.function_body(env, v, shape)}"]
            fn = self.draw(self.st.sampled_from(_UNARY + (g,)))
            pair = f"lambda {p}, {q}: {p} * {q} + {self.function_body(env, p, shape, closure=False)}"
            lines.append(self.draw(self.st.sampled_from([
                f"{out} = sum(map({fn}, [{args[0]}, {args[1]}]))",
                f"{out} = np.sum(np.stack(list(map({fn}, ({args[0]}, {args[1]})))), axis=0)",
                f"{out} = sum(map({pair}, [{args[0]}, {args[1]}], [{args[1]}, {args[0]}]))",
                f"{out} = {args[0]} + sum(map({g}, [{args[1]}]))"])))
        elif kind == "generator":
            gen, v, k, t = self.new_name("gen"), self.new_name("v"), self.new_name("k"), self.new_name("t")
            count = self.draw(self.st.integers(1, 3))
            lines = [f"def {gen}({v}):", f"    for {k} in range({count}):",
                     f"        yield {v} * (0.5 + 0.25 * {k}) + {self.function_body(env, v, shape)}"]
            if self.draw(self.st.booleans()):
                lines.append(f"    yield {args[1]} * {v}")
            lines += self.draw(self.st.sampled_from([
                [f"{out} = sum({gen}({args[0]}))"],
                [f"{out} = {args[1]}", f"for {t} in {gen}({args[0]}):", f"    {out} = {out} * 0.5 + {t}"],
                [f"{out} = np.sum(np.stack(list({gen}({args[0]}))), axis=0)"]]))
        else:  # function_loop
            act, v = self.new_name("act"), self.new_name("v")
            g = self.new_name("g")
            lines = [f"def {g}({v}):", f"    return {self.function_body(env, v, shape)}"]
            acts = self.draw(self.st.lists(self.st.sampled_from(_UNARY + (g,)), min_size=1, max_size=3))
            lines += [f"{out} = {args[0]}", f"for {act} in ({', '.join(acts)},):",
                      f"    {out} = {act}({out}) * 0.9 + {args[1]}"]
        self.bind(env, out, shape, Expr("fresh"))
        return lines
