"""Reverse-mode regressions of issue 9: each program once gave a silently wrong derivative,
crashed, or was refused although it should work. Every gradient is checked against central
finite differences of the original function (run on copies) and against dualtape.grad."""

import numpy as np
import pytest

import dualtape.numpy_api as dnp
import dualtape.transforms as dt
from dualtape.transforms import TransformError

import issue9_reverse_functions as fns


def _copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def fd_grad(f, args, i=0, eps=1e-6):
    """d sum(f) / d args[i] by central differences, f run on copies of the arguments."""
    x = args[i]
    shape = np.shape(x)
    out = np.zeros(shape)
    for idx in np.ndindex(shape):
        hi, lo = _copies(args), _copies(args)
        if shape:
            hi[i][idx] += eps
            lo[i][idx] -= eps
        else:
            hi[i], lo[i] = x + eps, x - eps
        out[idx] = (np.sum(f(*hi)) - np.sum(f(*lo))) / (2 * eps)
    return out


def check_grad(f, args, i=0):
    """The transformer's gradient w.r.t. args[i] equals finite differences, and the caller's
    arrays are left untouched."""
    before = _copies(args)
    got = dt.grad(f, wrt=i)(*args)
    for a, b in zip(args, before):
        assert np.array_equal(a, b)
    assert np.allclose(got, fd_grad(f, args, i), rtol=1e-6, atol=1e-7), (got, fd_grad(f, args, i))
    return got


def test_loop_reassigning_names_and_stacking_subscripts():
    # issue 9: in a loop body that wrote `y1` twice, the backward recomputation read the first
    # version where the second was meant, and `y = y + v` credited the adjoint of the new `y`
    # to the old one: an inline RK4 step gave a wrong gradient
    check_grad(fns.rk4_step, [np.array([0.3, -1.2]), 0.7])
    check_grad(fns.rk4_step, [np.array([0.3, -1.2]), 0.7], 1)


def test_constant_overwritten_then_augmented_in_a_loop():
    # issue 9: `x = 0.99; x += 0.5` inside a loop: the recomputation used 0.99, not 1.49
    assert np.isclose(check_grad(fns.constant_then_augmented, [1.3]), 1.49 ** 2)


def test_loop_variable_rebound_in_the_body():
    # issue 9: `for i, k in enumerate(ks): k = 1.15`: the backward sweep read ks[i], not 1.15
    check_grad(fns.loop_variable_rebound, [1.3])


def test_vjp_of_an_output_filled_by_subscript_writes_leaves_dy_alone():
    # issue 9: the backward sweep zeroed `bout[i]` in the caller's dy, so a second use of dy
    # (here: the reference) saw zeros
    x, dy = np.array([0.5, -1.2, 2.0]), np.array([1.0, -2.0, 0.5])
    dy_before = dy.copy()
    got = dt.vjp(fns.filled_buffer)(x, dy)
    assert np.array_equal(dy, dy_before)
    jacobian = np.array([fd_grad(lambda x: fns.filled_buffer(x)[i], [x]) for i in range(3)])
    assert np.allclose(got, dy @ jacobian, rtol=1e-6, atol=1e-7)


def test_user_names_that_look_generated():
    # issue 9: a user variable `_stack` replaced the stack of saved values (a crash, or a wrong
    # gradient); `_retval`, `bx`, `_t1` and locals named like runtime helpers or builtins
    # (`unbroadcast`, `len`) must not collide with generated names either
    check_grad(fns.generated_looking_names, [1.3])
    check_grad(fns.generated_looking_names, [np.array([0.4, 1.1])])
    check_grad(fns.shadows_helpers, [np.array([0.4, 1.1])])
    with pytest.raises(TransformError, match=r"issue9_reverse_functions.py:\d+ in parameter_named_stack: "
                       r"the parameter `_stack`.*\n  Rename the parameter"):
        dt.grad(fns.parameter_named_stack)


def test_user_name_spelled_like_a_temporary_keeps_its_adjoint():
    # issue 9 (found by the program checker): the adjoint of a user variable `_sin_x` was taken
    # for a temporary's, local to one statement group, so a swap `_sin_x, x = x, _sin_x` lost
    # the adjoint flowing into `_sin_x`: vjp gave 0 for x where finite differences give 9
    f = fns.swaps_a_user_name_spelled_like_a_temporary
    args, dy = [1.197, np.array([-0.0, 0.0, 0.104])], np.arange(9.0).reshape(3, 3)
    bx, by = dt.vjp(f, wrt=(0, 1))(*args, dy)
    weighted = lambda x, y: f(x, y) * dy  # noqa: E731  (d sum(f * dy) is the vjp with dy)
    assert np.isclose(bx, dy.sum()) and np.isclose(bx, fd_grad(weighted, args, 0), rtol=1e-6)
    assert np.allclose(by, fd_grad(weighted, args, 1), rtol=1e-6, atol=1e-7)



@pytest.mark.parametrize("f", [fns.rebinds_a_float_parameter_to_a_matrix_after_a_loop,
                               fns.rebinds_a_float_parameter_to_a_matrix_in_one_branch])
def test_zero_adjoint_of_a_rebound_parameter_has_its_shape(f):
    # issue 9 (program checker): a loop's or branch's backward starts an overwritten name's adjoint
    # from `zeros_like(y)`, read while `y` held a later value (a matrix) because nothing saved `y`:
    # the gradient for the float argument came back as a 3x3 matrix of zeros
    args = [np.array([-0.019, 0.166, -1.5]), 0.834]
    got = check_grad(f, args, 1)
    assert np.shape(got) == () and got == 0.0
    check_grad(f, args, 0)


def test_value_returned_beside_the_gradient_is_not_restored_by_the_backward_sweep():
    # issue 9 (program checker, with the checker's new primal comparison): vjp(preserve_result=True)
    # returned the buffer the backward sweep then restored slice by slice: zeros where f gave 2.0
    f = fns.returns_a_buffer_written_in_a_branch
    x, dy = np.arange(9.0).reshape(3, 3) / 10, np.ones((3, 3))
    grad, value = dt.vjp(f, preserve_result=True)(x, dy)
    assert np.array_equal(value, f(x)) and np.allclose(grad, 1.0)
    f, x = fns.returns_a_view_of_a_buffer_early, np.array([1.011, -0.282, -0.161])  # `return u[:, 0]`
    grad, value = dt.vjp(f, preserve_result=True)(x, np.ones(3))
    assert np.array_equal(value, f(x)) and np.array_equal(grad, [1.0, 0.0, 0.0])

def test_walrus_operator():
    # issue 9: `if (y := x * 2) > 1: return y` was read as an inactive comparison: 0.0, not 2.0
    assert check_grad(fns.walrus_in_condition, [0.7]) == 2.0
    assert check_grad(fns.walrus_in_condition, [0.2]) == 1.0
    with pytest.raises(TransformError, match=r"issue9_reverse_functions.py:\d+ in walrus_in_later_operand: the "
                       r"assignment expression `y := \.\.\.` may not run.*\n  Assign `y` in a statement"):
        dt.grad(fns.walrus_in_later_operand)


def test_grad_of_a_non_scalar_output_is_refused():
    # issue 9: grad of a vector output silently returned the gradient of its sum (JAX refuses)
    with pytest.raises(TransformError, match=r"issue9_reverse_functions.py:\d+ in vector_output: it returned a "
                       r"value of shape \(3,\); grad needs a scalar output.*\n  Use transforms.vjp\(vector_output\)"):
        dt.grad(fns.vector_output)(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(TransformError, match="shape \\(3,\\)"):
        dt.grad(fns.vector_output, preserve_result=True)(np.array([1.0, 2.0, 3.0]))
    assert dt.grad(fns.vector_output)(1.5) == 2.0  # a scalar in, a scalar out
    assert np.allclose(dt.vjp(fns.vector_output)(np.array([1.0, 2.0, 3.0]), np.ones(3)), 2.0)


def test_loop_over_an_array_the_body_rebinds():
    # issue 9: `for v in x: x = [v, v, 0.5]` iterated over the new `x` from the second step on
    check_grad(fns.loop_over_rebound_array, [np.array([0.3, -1.2, 0.8])])


@pytest.mark.parametrize("f, what", [
    (fns.uses_eval, r"`eval\(...\)` reads or runs code by name"),
    (fns.uses_full, r"the call of `np.full`.* cannot be differentiated"),
])
def test_unknown_callables_and_mutating_helpers_are_refused(f, what):
    # issue 9: sorted() and np.full() were taken for functions without derivative, eval() ran
    # unseen, and a helper appending to / popping from a list argument was differentiated as
    # if the list did not change: all gave a zero gradient without a word
    with pytest.raises(TransformError, match=rf"issue9_reverse_functions.py:\d+ in {f.__name__}: {what}.*\n  \S"):
        dt.grad(f)(1.3)


def test_helpers_appending_to_or_popping_from_the_callers_own_list():
    # (refused above before calls/list_arguments.py: the helper's version returns the changed
    # list and the caller rebinds it) 6a^2 and a^2 + a
    assert dt.grad(fns.calls_appender)(1.3) == pytest.approx(12 * 1.3, rel=1e-12)
    assert dt.grad(fns.calls_popper)(1.3) == pytest.approx(2 * 1.3 + 1.0, rel=1e-12)


def test_sorted_follows_its_values():
    # (refused above before sorted was written out: the derivative follows the permutation)
    assert dt.grad(fns.uses_sorted)(1.3) == 1.0
    assert dt.grad(fns.uses_sorted)(-1.3) == 2.0


def test_a_helper_writing_into_its_own_copy_is_not_refused():
    check_grad(fns.calls_copier, [np.array([0.3, -1.2, 0.8])])


def test_one_expression_of_300_terms():
    # issue 9: a sum of 300 terms written out raised RecursionError inside the parser
    assert np.isclose(check_grad(fns.long_sum, [1.3]), 300 * 301 / 2)
    assert np.isclose(dt.jvp(fns.long_sum)(1.3, 1.0)[1], 300 * 301 / 2)


def test_explicit_scheme_step_with_a_fresh_copy():
    # issue 9: `un = u.copy(); un[i] = ...; u = un` was refused as a write into memory `u`
    # shares; the copy made at the top of each step is a new array, so nothing else sees it
    check_grad(fns.explicit_scheme, [np.array([0.1, 0.5, -0.3, 0.8, 0.2])])
    # still refused: `v = un` shares the array written in the same step, and without a copy per
    # step `u = un` makes `u` the array written in the next step
    for f in (fns.explicit_scheme_shared, fns.explicit_scheme_no_copy):
        with pytest.raises(TransformError, match=rf"in {f.__name__}: `un\[i\] = \.\.\.` writes into `un`, but `\w+`"):
            dt.grad(f)


X3 = np.array([0.4, -1.1, 0.8])


@pytest.mark.parametrize("f, args", [
    (fns.tf_functions, [X3]),      # `import dualtape as tf` code: tf.reduce_sum, tf.sin, tf.multiply
    (fns.ravel_and_copy, [X3]),    # np.ravel (np.copy worked)
    (fns.nested_targets, [1.3]),   # `(a, b), c = ...`
    (fns.augmented_floats, [X3]),  # `s += v` on values the transformer can tell are floats
], ids=lambda v: getattr(v, "__name__", ""))
def test_constructs_that_were_refused(f, args):
    # issue 9: these were refused (or crashed) although users expect them to work
    check_grad(f, args)


def test_dict_argument():
    # issue 9: `d['a'] * d['b']` with a dict argument crashed (the adjoint of a dict)
    d = {"a": 1.5, "b": 2.0, "c": np.array([1.0, -2.0])}
    got = dt.grad(fns.dict_argument)(d)
    assert got["a"] == 2.0 and got["b"] == 1.5 and np.allclose(got["c"], [2.0, -4.0])


@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("x", [1.3, np.array([1.3, 0.2])], ids=["float", "array"])
def test_loop_with_reassignments_in_a_branch(x, flag):
    # issue 9: with the branch not taken, the backward sweep read a version of `y` made only
    # inside it (UnboundLocalError); with it taken, the gradient was wrong
    check_grad(fns.reassigning_loop_in_a_branch, [x, flag])
    check_grad(fns.constant_then_augmented_in_a_branch, [x, flag])


def test_zero_gradient_of_a_rebound_parameter_has_its_shape():
    # issue 9: `x = y` before any use of the array x: its (zero) gradient came out as 0.0, the
    # zeros of the value x held at the end, not of the argument passed
    gx, gy = dt.vjp(fns.parameter_rebound_to_another, wrt=(0, 1))(np.array([0.19, 0.0]), 0.5, 1.0)
    assert np.array_equal(gx, np.zeros(2)) and gy == 3.0


def test_subtracting_a_name_from_itself_then_rebinding_it():
    # issue 9: `x -= x` followed by a reassignment: x contributes nothing (the gradient of s
    # is 9, from the two `s * 3.0`), the recomputation used to read a stale version of x
    assert np.isclose(check_grad(fns.subtract_itself_then_rebind, [1.3]), 9.0)
    check_grad(fns.subtract_itself_then_rebind, [np.array([1.3, -0.2])])


def test_user_globals_named_like_runtime_helpers():
    # issue 9: a user's helper `step(y, h)` and constant `rows` were replaced by the runtime
    # helpers of the same names in the generated module (a crash, or a wrong number)
    check_grad(fns.integrate_with_step, [np.array([0.3, 1.0])])
    assert "step_1(y, 0.1)" in dt.grad(fns.integrate_with_step).source


def test_parameter_named_like_a_helper_the_code_calls():
    # issue 9: a parameter `bt` shadowed the runtime helper bt() of batched tangent code (a
    # crash); refused where the generated code calls it, accepted where it does not
    x = np.array([0.3, 1.0])
    with pytest.raises(TransformError, match=r"in parameter_named_like_a_helper: the parameter `bt` has the "
                       r"name of a helper the generated code calls.\n  Rename the parameter"):
        dt.jacfwd(fns.parameter_named_like_a_helper)(x, np.array([2.0, 1.0]))
    got = dt.vjp(fns.parameter_named_like_a_helper)(x, np.array([2.0, 1.0]), np.ones(2))
    assert np.allclose(got, np.cos(x) * [2.0, 1.0])


def test_buffer_filled_in_a_loop_from_fresh_arrays_terminates():
    # issue 9 (programs.md P2): the aliasing pass never converged on `u[j] = np.ones(2)[j]` in a
    # loop (each step made a stale twin of the previous twin)
    assert np.allclose(check_grad(fns.fills_a_buffer_from_fresh_arrays, [1.3, 0.4]), 2.0)
    assert check_grad(fns.fills_a_buffer_from_fresh_arrays, [1.3, 0.4], 1) == 1.0


def _rules_of(op):
    """Every template rule of an op (VJP and JVP), each input once."""
    import inspect
    from dualtape.registry import LINEAR, NOT_DIFFERENTIABLE
    rules = []
    for table in (op.vjp, op.jvp):
        if table in (None, NOT_DIFFERENTIABLE, LINEAR):
            continue
        for rule in (table if isinstance(table, tuple) else (table,)):
            if callable(rule) and not op.opaque:
                rules.append(rule)
    return [r for r in rules if inspect.isfunction(r)]


def _template_ops():
    from dualtape.registry import REGISTRY
    return [op for op in REGISTRY.values() if op.has_rules and _rules_of(op)]


@pytest.mark.parametrize("op", _template_ops(), ids=lambda op: op.name)
@pytest.mark.parametrize("optimize", [True, False])
def test_instantiated_templates_never_compare_a_literal_with_is(op, optimize):
    # issue 9: cumsum_vjp's `-1 if axis is None else ...` with a literal axis read `1 is None`
    # in generated code (SyntaxWarning "is" with a literal); every rule, with every sample's
    # static keywords substituted as literals, must compile with that warning as an error
    import warnings
    from dualtape.transforms.templates import rules as templates
    from dualtape.transforms.optimize import tidy
    from dualtape.transforms.ir import syntax as _gast
    statics = [{}] + [sample(np.random.default_rng(0))[1] for sample in op.samples]
    for rule in _rules_of(op):
        params, _, _ = templates.rule_template(rule)
        for static in statics:
            mapping = {p: _gast.name(p) for p in params if p not in static}
            for k, v in static.items():
                if k in params:
                    mapping[k] = (_gast.constant(v) if isinstance(v, (int, float, bool, type(None)))
                                  else _gast.parse(repr(v).replace("array(", "np.array(")).body[0].value)
            expr = tidy.simplify(templates.instantiate(rule, mapping), lambda e: False, optimize)
            source = f"_ = {_gast.unparse(expr)}\n"
            with warnings.catch_warnings():
                warnings.simplefilter("error", SyntaxWarning)
                compile(source, f"<{rule.__name__} {static}>", "exec")


def _cumsum_axis_literal(x):
    return np.sum(np.cumsum(x, axis=1) ** 2)


def _cumsum_reverse_literal(x):
    return dnp.sum(dnp.cumsum(x, axis=-1, reverse=True) * x)


def test_cumsum_with_literal_static_keywords_compiles_cleanly():
    # issue 9: the generated adjoint read `axis=-1 if 1 is None else ...`; now `1 is None`
    # folds to False and the conditional to its branch
    import warnings
    x = np.arange(6.0).reshape(2, 3) / 7
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        for f in (_cumsum_axis_literal, _cumsum_reverse_literal):
            df = dt.grad(f)
            assert " is None" not in df.source and "1 is" not in df.source
            np.testing.assert_allclose(df(x), fd_grad(f, [x]), rtol=1e-6, atol=1e-8)
            u = np.ones_like(x)
            value, tangent = dt.jvp(f)(x, u)
            assert np.isclose(value, f(x))
            assert np.isclose(tangent, np.sum(fd_grad(f, [x]) * u), rtol=1e-6)


def _module_from_source(tmp_path, name, source, **globals_):
    import importlib.util
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(globals_)
    spec.loader.exec_module(module)
    return module


def test_generated_function_name_is_fresh_against_user_globals(tmp_path):
    # issue 9: the generated `f_vjp` / `f_jvp` / `f_hvp` ran in a copy of f's globals and
    # replaced a user global of that name that f reads (a crash or a silently wrong number);
    # it now gets a suffix, as helper names do
    source = ("import numpy as np\n\nf_vjp = 3.0\nf_jvp = 5.0\nf_hvp = 7.0\n\n\n"
              "def f(x):\n    return np.sum(x * x * f_vjp + x * f_jvp + x * x * x * f_hvp)\n")
    m = _module_from_source(tmp_path, "user_names_like_generated", source)
    x = np.array([0.3, -1.2])
    want = 2 * x * 3.0 + 5.0 + 3 * x * x * 7.0
    for df in (dt.grad(m.f), dt.vjp(m.f)):
        got = df(x) if df.mode == "grad" else df(x, 1.0)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert df.name == "f_vjp_2" and "def f_vjp_2(" in df.source
    value, tangent = dt.jvp(m.f)(x, np.ones(2))
    assert dt.jvp(m.f).name == "f_jvp_2"
    np.testing.assert_allclose(tangent, np.sum(want), rtol=1e-12)
    np.testing.assert_allclose(dt.hvp(m.f)(x, np.ones(2)), 6.0 + 42.0 * x, rtol=1e-12)
    assert dt.hvp(m.f).name == "f_hvp_2"
    assert (m.f_vjp, m.f_jvp, m.f_hvp) == (3.0, 5.0, 7.0)  # the user's globals are untouched


def test_generated_function_name_is_fresh_against_called_functions(tmp_path):
    # issue 9: a user function that f calls, from another module, reads a global named like
    # the generated function
    other = _module_from_source(tmp_path, "helper_reads_g_vjp", "g_vjp = 2.0\n\n\ndef helper(x):\n"
                                "    return x * g_vjp\n")
    m = _module_from_source(tmp_path, "calls_helper", "def g(x):\n    return helper(x) * x\n",
                            helper=other.helper)
    df = dt.grad(m.g)
    assert df.name != "g_vjp"
    assert np.isclose(df(1.5), 2 * 2.0 * 1.5)
    assert np.isclose(dt.jvp(m.g)(1.5, 1.0)[1], 2 * 2.0 * 1.5)


_SAVED_HELPER_SOURCE = '''import numpy as np

SCALE = 2.5
OFFSETS = (1.0, (2.0, 3))
W = np.array([0.5, -1.5, 2.0])
TABLE = {"a": 1.0}


def weights(n):
    return W[:n] * SCALE + OFFSETS[0] + OFFSETS[1][1] + shift()


def shift():
    return SCALE / 5


def from_table(n):
    return TABLE["a"] * n


def f(x):
    return np.sum(x * weights(2))


def g(x):
    return np.sum(x * from_table(2))
'''


def test_save_writes_the_globals_copied_helpers_read(tmp_path):
    # issue 9: save() copied the user helper `weights` verbatim without the constants it reads
    # (SCALE, OFFSETS, W), nor the function it calls: importing the saved module and calling the
    # gradient raised NameError. Imported in a fresh interpreter, it now agrees with df
    import json
    import subprocess
    import sys
    m = _module_from_source(tmp_path, "user_helpers_read_globals", _SAVED_HELPER_SOURCE)
    df = dt.grad(m.f)
    path = df.save(tmp_path / "saved_f_grad.py")
    x = np.array([1.0, 2.0])
    script = ("import importlib.util, json, numpy as np\n"
              f"spec = importlib.util.spec_from_file_location('saved_f_grad', {str(path)!r})\n"
              "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"
              f"print(json.dumps(module.{df.name}(np.array({x.tolist()!r})).tolist()))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(json.loads(run.stdout), df(x))
    np.testing.assert_allclose(df(x), (0.5, -1.5) * np.array(2.5) + 4.0 + 0.5, rtol=1e-15)
    text = path.read_text()
    assert "W = np.array([0.5, -1.5, 2.0], dtype=np.float64)" in text and "def shift():" in text
    with pytest.raises(TransformError, match=r"\[save\] the function `from_table` reads the global `TABLE` "
                       r"\(dict\), which cannot be written into a module.\n  Make `TABLE` a number, a tuple "
                       r"of numbers or a NumPy array, or pass it to from_table as an argument."):
        dt.grad(m.g).save(tmp_path / "saved_g_grad.py")


_PREFIXED_MODULE_SOURCE = '''import numpy as np


def push(acc, v):
    acc.append(v * 1.0)


def scale(v):
    return np.tanh(v) * 2.0


def f(x):
    s = [0.5]
    push(s, np.sum(x))
    return np.sum(np.stack(s)) + np.sum(x)


def g(x):
    return np.sum(scale(x) * x)
'''


@pytest.mark.parametrize("module_name", ["dualtape_user_model", "numpy_user_helpers"])
def test_helpers_in_modules_named_like_the_libraries_are_user_functions(tmp_path, module_name):
    # issue 9 (programs.md P3, found again by the program checker, whose modules are named
    # dualtape_program_<hash>): a module name merely starting with "dualtape" or "numpy" made its
    # helpers count as library code, so `push` appending to a list went unchecked and the pushed
    # term got no derivative (grad/vjp/jvp gave 1 where d f/d x_i is 2), and a plain helper was
    # refused as "neither a registry op nor a Python function"; the push is followed now
    import dualtape
    m = _module_from_source(tmp_path, module_name, _PREFIXED_MODULE_SOURCE)
    x = np.array([0.3, 0.5, 0.1])
    np.testing.assert_allclose(dualtape.grad(m.f)(x), fd_grad(m.f, [x]), rtol=1e-6)  # 2 each
    # `push` is the user's: its change of the caller's own list is followed (calls/list_arguments.py)
    np.testing.assert_allclose(dt.grad(m.f)(x), [2.0, 2.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(dt.vjp(m.f)(x, 1.0), [2.0, 2.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(dt.jvp(m.f)(x, np.ones(3))[1], 6.0, rtol=1e-12)
    np.testing.assert_allclose(dt.hvp(m.f)(x, np.ones(3)), [0.0, 0.0, 0.0], atol=1e-12)
    expected = fd_grad(m.g, [x])
    np.testing.assert_allclose(dt.grad(m.g)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(dt.grad(m.g)(x), dualtape.grad(m.g)(x), rtol=1e-12)
    np.testing.assert_allclose(dt.jvp(m.g)(x, np.ones(3))[1], np.sum(expected), rtol=1e-6)


_HELPER_MUTATION_SOURCE = '''import numpy as np

STORE = []


def push_alias(acc, v):
    a = acc
    a.append(v * 1.0)


def push_global(v):
    STORE.append(v)


def f(x):
    s = [0.5]
    push_alias(s, np.sum(x))
    return np.sum(np.stack(s)) + np.sum(x)


def g(x):
    STORE.clear()
    STORE.append(0.5)
    push_global(np.sum(x))
    return np.sum(np.stack(STORE)) + np.sum(x)
'''


def test_helpers_changing_an_argument_through_an_alias_or_a_module_list_are_refused(tmp_path):
    # issue 9 (programs.md P3, variants found by hand after e21ed5a): a helper appending through
    # a local alias of its argument (`a = acc; a.append(v)`) or to a module-level list was not
    # refused: grad/vjp gave 1 and hvp 0 where d f/d x_i is 2 (jvp 3 where the tangent is 6)
    import dualtape
    m = _module_from_source(tmp_path, "helpers_change_lists", _HELPER_MUTATION_SOURCE)
    x = np.array([0.3, 0.5, 0.1])
    for fn in (m.f, m.g):
        np.testing.assert_allclose(dualtape.grad(fn)(x), fd_grad(fn, [x]), rtol=1e-6)  # 2 each
    for make, call in [(dt.grad, lambda d: d(x)), (dt.vjp, lambda d: d(x, 1.0)),
                       (dt.jvp, lambda d: d(x, np.ones(3))), (dt.hvp, lambda d: d(x, np.ones(3)))]:
        with pytest.raises(TransformError, match=r"helpers_change_lists.py:17 in f: `push_alias` changes its "
                           r"argument `acc` in place \(`a.append\(v \* 1.0\)`\), which the transformer cannot "
                           r"track.\n  Make push_alias return the new value"):
            call(make(m.f))
        with pytest.raises(TransformError, match=r"helpers_change_lists.py:24 in g: `push_global` changes the "
                           r"module-level `STORE` in place \(`STORE.append\(v\)`\), which the transformer cannot "
                           r"track.\n  Make push_global return the new value and assign it, or use GradientTape"):
            call(make(m.g))


_DEAD_BUFFER_SOURCE = '''import numpy as np


def f(x):
    bw = np.ones(2)
    for t in range(2):
        bw *= 2.0
    return np.ones(2) + x * 3.0
'''


def test_buffer_updated_in_place_in_an_inactive_loop_keeps_its_binding(tmp_path):
    # issue 9 (found by the program checker): the inactive loop `for ...: bw *= 2.0` is kept as
    # written, but its `bw` (a Store in `+=`) was not counted as read, so dead-code elimination
    # dropped `bw = np.ones(2)`: UnboundLocalError in vjp, jvp and the mixtures
    import dualtape
    m = _module_from_source(tmp_path, "inactive_inplace_loop", _DEAD_BUFFER_SOURCE)
    x = np.array([-0.169, 0.215])
    expected = fd_grad(m.f, [x])  # 3 each
    np.testing.assert_allclose(dt.vjp(m.f)(x, np.ones(2)), expected, rtol=1e-6)
    np.testing.assert_allclose(dt.vjp(m.f)(x, np.ones(2)), dualtape.grad(lambda v: np.sum(m.f(v)))(x), rtol=1e-12)
    np.testing.assert_allclose(dt.jvp(m.f)(x, np.ones(2))[1], np.full(2, 3.0), rtol=1e-12)


_INACTIVE_EARLY_RETURN_SOURCE = '''import numpy as np


def f(x):
    for t in range(3):
        if t >= 1:
            return np.ones(2) * t
    return np.ones(2)


def g(x):
    t = 0
    while t < 5:
        t = t + 1
        if t >= 2:
            return np.ones(2) * t
    return np.zeros(2)
'''


def test_early_return_in_an_inactive_loop_stops_the_loop(tmp_path):
    # issue 9 (found by the program checker): a loop that writes no differentiated value is kept
    # as written, but desugar_jumps had taken its `break` out (the loop IR tests the flag), so an
    # early return ran on: transforms.jvp and vjp(preserve_result=True) returned f's value from the
    # last pass ([2, 2] where f(x) is [1, 1]; g gave [5, 5] where g(x) is [2, 2])
    m = _module_from_source(tmp_path, "inactive_early_return", _INACTIVE_EARLY_RETURN_SOURCE)
    x = np.array([-0.169, 0.215])
    for fn in (m.f, m.g):
        value, tangent = dt.jvp(fn)(x, np.ones(2))
        np.testing.assert_array_equal(value, fn(x))
        grad, result = dt.vjp(fn, preserve_result=True)(x, np.ones(2))
        np.testing.assert_array_equal(result, fn(x))
        expected = fd_grad(fn, [x])
        np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)
        np.testing.assert_array_equal(tangent, [0.0, 0.0])


_INACTIVE_LOOP_TARGET_SOURCE = '''import numpy as np


def f(x):
    for t, bout in enumerate(np.ones((2, 2))):
        (x, bout), a3 = (x, bout), 1.0
    return x * 3.0 + np.sum(bout)
'''


def test_forward_loop_target_over_an_inactive_sequence_made_active_gets_a_zero_tangent(tmp_path):
    # issue 9 (found by the program checker): forward mode keeps `for t, bout in enumerate(c)` as
    # written; the body made `bout` active (`(x, bout) = (x, bout)`) and read its tangent before any
    # was defined: UnboundLocalError in transforms.jvp and batched jvp
    m = _module_from_source(tmp_path, "inactive_loop_target", _INACTIVE_LOOP_TARGET_SOURCE)
    x = 0.5
    expected = fd_grad(m.f, [x])  # 3
    value, tangent = dt.jvp(m.f)(x, 1.0)
    assert value == m.f(x)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
    np.testing.assert_allclose(dt.jvp(m.f)(x, np.array([1.0, 2.0]))[1], [3.0, 6.0], rtol=1e-12)  # batched
    np.testing.assert_allclose(dt.grad(m.f)(x), expected, rtol=1e-6)


def item_of_sum(a, b):
    return (a + b).item(0, 1) * 3.0 + np.sum(a * b)


def indexed_sum(a, b):
    return (a + b)[0, 1] * 3.0 + np.sum(a * b)


def loop_over_slice_of_sum(a, b, n):
    s = 0.0
    for v in (a + b)[:n]:
        s = s + v * v
    return s


def test_item_of_an_expression_reads_the_element():
    # `.item(i, j)` of an expression (not a name) is rewritten to `(a + b)[i, j]`, in every mode
    a, b = np.arange(6.0).reshape(2, 3) / 7, np.full((2, 3), 0.3)
    import dualtape
    expected = dualtape.grad(indexed_sum, argnums=(0, 1))(a, b)
    for got, want in zip(dt.grad(item_of_sum, wrt=(0, 1))(a, b), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    da, db = np.ones((2, 3)), np.zeros((2, 3))
    _, tangent = dt.jvp(item_of_sum, wrt=(0, 1))(a, b, (da, db))
    np.testing.assert_allclose(tangent, np.sum(expected[0] * da), rtol=1e-12)


def test_loop_over_a_slice_of_an_expression():
    # the backward sweep of `for v in (a + b)[:n]` scatters the loop's adjoints into the slice
    a, b = np.array([0.1, 0.3, 0.7]), np.array([0.2, 0.2, 0.2])
    import dualtape
    expected = dualtape.grad(loop_over_slice_of_sum, argnums=(0, 1))(a, b, 2)
    for got, want in zip(dt.grad(loop_over_slice_of_sum, wrt=(0, 1))(a, b, 2), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(expected[0], [0.6, 1.0, 0.0], rtol=1e-12)


def nested_named_like_the_stack(x, y):
    def _stack(v):  # (the generated code's stack of saved values is `_stack`)
        return v * 2.0
    r = y * x
    for act in (np.sin, _stack, np.tanh):
        r = act(r) * 0.9
    return np.sum(r)


def test_a_nested_function_named_like_a_generated_name_is_lifted_under_another():
    from dualtape.testing import check_modes
    report = check_modes(nested_named_like_the_stack, [np.array([0.3, 0.5]), 0.7])
    assert not report.refused and report.checked, report
