"""More NumPy for `programs()`: NumPy functions the transformer reads (its
compositions: flip, moveaxis, repeat, split, inner, dot with a scalar, cov/corrcoef, select,
piecewise, multi_dot, float_power, einsum's sublist form, the decompositions' tuples) and
registry ops the first grammar did not draw (sort, cumprod, diff, pad, kron, roll, tril/triu,
clip, where, quantile, take_along_axis, dnp.put_along_axis, reductions with a float dtype=).

Each is a named feature (`NUMPY_FEATURES`), drawn as one expression of a known shape (a
float, an n-vector or an n x n matrix), so it composes with the rest of the grammar. Inputs
stay well conditioned: decompositions only see `spd + diag(0, 20, 40)` (eigenvalues at
least 11 apart, so eigen- and singular vectors are smooth; squared, so their signs do not
matter), powers only positive bases; kinks (sort, clip, where, quantile, select, piecewise)
are measure-zero, and `check_modes` discards differences taken across one.
"""

from .program_exprs import Expr

NUMPY_FEATURES = (
    "flip", "moveaxis", "repeat", "split", "inner", "dot_scalar", "cov", "select", "piecewise",
    "multi_dot", "float_power", "einsum_sublist", "svd", "eigh", "qr", "lstsq", "reduction_dtype",
    "quantile", "take_along_axis", "put_along_axis", "sort", "cumulative", "diff", "pad", "kron",
    "roll", "tril_triu", "clip", "where",
)

# feature -> the shapes (0: float, 1: vector, 2: matrix) it is drawn as
_SHAPES = {
    "flip": (1, 2), "moveaxis": (2,), "repeat": (1, 2), "split": (0, 1), "inner": (0, 2),
    "dot_scalar": (0, 1, 2), "cov": (0, 2), "select": (1, 2), "piecewise": (1, 2),
    "multi_dot": (0, 1, 2), "float_power": (0, 1, 2), "einsum_sublist": (0, 1, 2), "svd": (0, 2),
    "eigh": (0, 2), "qr": (2,), "lstsq": (1,), "reduction_dtype": (0, 1), "quantile": (0, 1),
    "take_along_axis": (1, 2), "put_along_axis": (1, 2), "sort": (1, 2), "cumulative": (1, 2),
    "diff": (1,), "pad": (1, 2), "kron": (2,), "roll": (1, 2), "tril_triu": (2,), "clip": (0, 1, 2),
    "where": (0, 1, 2),
}

_PIECEWISE = ["def pw_square(v):", "    return v ** 2", "", "",
              "def pw_scaled(v, k=1.5):", "    return v * k", "", ""]


class NumpyExprs:
    """Mixed into `ExprGen`: `numpy_options(shape)` and `numpy_expr(...)`."""

    def numpy_options(self, shape):
        rank = len(shape)
        return [(feat, feat) for feat in NUMPY_FEATURES if rank in _SHAPES[feat] and feat in self.on]

    def separated(self, env):
        """A symmetric positive definite matrix with eigenvalues at least 11 apart."""
        n = self.n
        gaps = ", ".join(f"{20.0 * k}" for k in range(n))
        return f"({self.spd_matrix(env, 0)} + np.diag(np.array([{gaps}])))"

    def numpy_expr(self, env, shape, kind, sub):
        n, rank = self.n, len(shape)
        v, m = (n,), (n, n)
        pick = lambda options: self.draw(self.st.sampled_from(options))  # noqa: E731
        k = self.draw(self.st.integers(1, n - 1))
        one = lambda e: Expr(e[0], names=frozenset().union(*[a.names for a in e[1:]]))  # noqa: E731
        # a view of its operand (flip, moveaxis, a split's piece): writing into it writes there
        view_of = lambda text, a: Expr(text, view=a.view, names=a.names)  # noqa: E731
        if kind == "flip":
            a = sub(shape)
            axis = pick(["", ", 0"] + ([", 1", ", (0, 1)"] if rank == 2 else []))
            return view_of(f"np.flip({a.text}{axis})", a)
        if kind == "moveaxis":
            a = sub(m)
            return view_of(pick([f"np.moveaxis({a.text}, 0, 1)", f"np.moveaxis({a.text}, [0, 1], [1, 0])",
                                 f"np.moveaxis({a.text}, -1, 0)"]), a)
        if kind == "repeat":
            if rank == 1:
                a = sub(v)
                return one((pick([f"np.repeat({a.text}, 2)[:{n}]", f"np.repeat({a.text}[{k}:], {n})[:{n}]"]), a))
            a = sub(m)
            return one((pick([f"np.repeat({a.text}, 2, axis=1)[:, :{n}]",
                              f"np.repeat({a.text}[:1], [{n}], axis=0)"]), a))
        if kind == "split":
            a = sub(m)
            if rank == 1:
                i = self.draw(self.st.integers(0, n - 1))
                return view_of(pick([f"np.split({a.text}, {n})[{i}][0]", f"np.vsplit({a.text}, {n})[{i}][0]",
                                     f"np.hsplit({a.text}, {n})[{i}][:, 0]",
                                     f"np.array_split({a.text}, 2, axis=1)[0][:, 0]"]), a)
            b = sub(v)
            return one((pick([f"np.sum(np.split({b.text}, [{k}])[1])",
                              f"np.sum(np.array_split({b.text}, 2)[1] ** 2)",
                              f"np.sum(np.split({a.text}, [{k}], axis=1)[0])"]), a, b))
        if kind == "inner":
            s = v if rank == 0 else m
            a, b = sub(s), sub(s)
            return one((f"np.inner({a.text}, {b.text})", a, b))
        if kind == "dot_scalar":
            a, c = sub(shape), sub(())
            return one((pick([f"np.dot({c.text}, {a.text})", f"np.dot({a.text}, {c.text})"]), a, c))
        if kind == "cov":
            if rank == 0:
                b, c = sub(v), sub(v)
                return one((pick([f"np.cov({b.text})", f"np.sum(np.cov({b.text}, {c.text}))"]), b, c))
            a = sub(m)
            return one((pick([f"np.cov({a.text})", f"np.cov({a.text}, rowvar=False, bias=True)",
                              f"np.cov({a.text}, ddof=0)",
                              f"np.corrcoef(np.tanh({a.text}) + np.array([{', '.join(str(3.0 * j) for j in range(n))}]))"]),
                        a))
        if kind == "select":
            c, a, b, d = sub(shape), sub(shape), sub(shape), sub(shape)
            lo, hi = self.number(-1.0, 0.0), self.number(0.0, 1.0)
            default = pick(["", f", {d.text}"])
            return one((f"np.select([{c.text} > {hi}, {c.text} < {lo}], [{a.text}, np.sin({b.text})]{default})",
                        a, b, c, d))
        if kind == "piecewise":
            if "pw_square" not in self.taken:
                self.taken |= {"pw_square", "pw_scaled"}
                self.module_lines += _PIECEWISE
            a = sub(shape)
            t = self.number(-0.5, 0.5)
            funcs = pick(["[pw_square, pw_scaled]", "[pw_scaled, np.sin]", "[pw_square, 0.5, pw_scaled]"])
            conds = f"[{a.text} > {t}]" if funcs.count(",") == 1 else f"[{a.text} > {t}, {a.text} < {t} - 0.5]"
            return one((f"np.piecewise({a.text}, {conds}, {funcs})", a))
        if kind == "multi_dot":
            layout = {0: [v, m, m, v], 1: pick([[m, m, v], [v, m, m]]), 2: [m, m, m]}[rank]
            parts = [sub(s) for s in layout]
            return one((f"np.linalg.multi_dot([{', '.join(p.text for p in parts)}])", *parts))
        if kind == "float_power":
            a, b = sub(shape), sub(shape)
            return one((pick([f"np.float_power(1.0 + {a.text} * {a.text}, 1.5)",
                              f"np.float_power(1.0 + {a.text} * {a.text}, 1.0 + 0.5 * np.tanh({b.text}))",
                              f"np.float_power({a.text}, 2)"]), a, b))
        if kind == "einsum_sublist":
            if rank == 0:
                a, b = sub(v), sub(v)
                return one((f"np.einsum({a.text}, [0], {b.text}, [0])", a, b))
            a, b = sub(m), sub(shape)
            if rank == 1:
                return one((f"np.einsum({a.text}, [0, 1], {b.text}, [1], [0])", a, b))
            forms = [f"np.einsum({a.text}, [0, 1], {b.text}, [1, 2], [0, 2])",
                     f"np.einsum({a.text}, [0, 1], {b.text}, [2, 1])"]
            if a.text.isidentifier() and b.text.isidentifier():  # '...' needs the operands as names
                forms.append(f"np.einsum({a.text}, [Ellipsis, 1], {b.text}, [Ellipsis, 1], [Ellipsis])[:, None]"
                             f" * np.ones(({n}, {n}))")
            return one((pick(forms), a, b))
        if kind in ("svd", "eigh", "qr", "lstsq"):
            s = self.separated(env)
            if kind == "svd":
                return Expr(pick([f"np.sum(np.log(np.linalg.svd({s}, compute_uv=False)))",
                                  f"np.sum(np.linalg.svd({s})[1] ** 2)"]) if rank == 0 else
                            pick([f"np.linalg.svd({s})[0] ** 2", f"np.linalg.svd({s})[2] ** 2"]))
            if kind == "eigh":
                return Expr(f"np.sum(np.sqrt(np.linalg.eigh({s})[0]))" if rank == 0 else
                            f"np.linalg.eigh({s})[1] ** 2")
            if kind == "qr":
                return Expr(pick([f"np.linalg.qr({s})[1] ** 2", f"np.linalg.qr({s})[0] ** 2",
                                  f"np.linalg.qr({s}, mode='r') ** 2"]))
            b = sub(v)
            return one((f"np.linalg.lstsq({s}, {b.text}, rcond=None)[0]", b))
        if kind == "reduction_dtype":
            a = sub(m)
            how = pick(["sum", "mean", "prod"])
            dtype = pick(["np.float64", "float", "'float64'"])
            axis = "" if rank == 0 else f"axis={self.draw(self.st.integers(0, 1))}, "
            return one((f"np.{how}({a.text}, {axis}dtype={dtype})", a))
        if kind == "quantile":
            a = sub(m)
            q = self.number(0.05, 0.95)
            method = pick(["", ", method='lower'", ", method='higher'", ", method='nearest'", ", method='midpoint'"])
            how = pick(["quantile", "percentile"])
            if how == "percentile":
                q = repr(round(float(q) * 100, 1))
            axis = "" if rank == 0 else f", axis={self.draw(self.st.integers(0, 1))}"
            return one((f"np.{how}({a.text}, {q}{axis}{method})", a))
        if kind == "take_along_axis":
            a = sub(shape)
            if rank == 1:
                idx = f"np.array({[(j + k) % n for j in range(n)]})"
                return one((pick([f"np.take_along_axis({a.text}, {idx}, axis=0)",
                                  f"np.take_along_axis({a.text}, np.argsort({a.text}), axis=0)"]), a))
            idx = f"np.array([{[(j + k) % n for j in range(n)]}])"
            return one((pick([f"np.take_along_axis({a.text}, {idx}, axis=1) * np.ones(({n}, {n}))",
                              f"np.take_along_axis({a.text}, np.argsort({a.text}, axis=0), axis=0)"]), a))
        if kind == "put_along_axis":
            if "dnp" not in self.taken:
                self.taken.add("dnp")
                self.module_lines += ["from dualtape import dnp", "", ""]
            a, b = sub(shape), sub(shape[1:])
            if rank == 1:
                return one((f"dnp.put_along_axis({a.text}, np.array([{k}]), {b.text}, axis=0)", a, b))
            idx = f"np.array([{[(j + k) % n for j in range(n)]}])"
            return one((f"dnp.put_along_axis({a.text}, {idx}, {b.text}[None], axis=0)", a, b))
        if kind == "sort":
            a = sub(shape)
            return one((pick([f"np.sort({a.text})"] + ([f"np.sort({a.text}, axis=0)"] if rank == 2 else [])), a))
        if kind == "cumulative":
            a = sub(shape)
            how = pick(["cumprod", "cumsum"])
            axis = f", axis={self.draw(self.st.integers(0, 1))}" if rank == 2 else ""
            # 1.5 + tanh: away from 0, where the Cumprod rule (x / x) is undefined (numerics.md)
            return one((f"np.{how}(1.5 + np.tanh({a.text}){axis})", a))
        if kind == "diff":
            a = sub(v)
            return one((pick([f"np.diff(np.concatenate([{a.text}, {a.text}[:1]]))",
                              f"np.diff(np.concatenate([{a.text}[:1] * 0.5, {a.text}]))"]), a))
        if kind == "pad":
            a = sub(shape)
            if rank == 1:
                return one((pick([f"np.pad({a.text}, 1)[{k}:{k + n}]",
                                  f"np.pad({a.text}, (1, 0), constant_values=0.5)[:{n}]"]), a))
            return one((f"np.pad({a.text}, ((1, 0), (0, 1)))[:{n}, 1:]", a))
        if kind == "kron":
            a, b = sub(v), sub(v)
            return one((f"np.reshape(np.kron({a.text}, {b.text}), ({n}, {n}))", a, b))
        if kind == "roll":
            a = sub(shape)
            axis = f", axis={self.draw(self.st.integers(0, 1))}" if rank == 2 and self.draw(self.st.booleans()) else ""
            return one((f"np.roll({a.text}, {pick([k, -k])}{axis})", a))
        if kind == "tril_triu":
            a = sub(m)
            return one((f"np.{pick(['tril', 'triu'])}({a.text}{pick(['', ', -1', ', 1'])})", a))
        if kind == "clip":
            a = sub(shape)
            lo, hi = self.number(-1.0, 0.0), self.number(0.0, 1.0)
            return one((f"np.clip({a.text}, {lo}, {hi})", a))
        if kind == "where":
            c, a, b = sub(shape), sub(shape), sub(shape)
            return one((f"np.where({c.text} > {self.number(-1.0, 1.0)}, {a.text}, np.sin({b.text}))", a, b, c))
        raise AssertionError(kind)
