"""Every example of the TF autodiff guides (../shared/seeds/), run with `import dualtape as tf`.

Each test is one notebook cell (or a few that belong together); it asserts the values the
guides print or state in comments. Random values are seeded, so only relations hold.
"""

import numpy as np
import pytest

import dualtape as tf


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()
    tf.random.set_seed(0)


def close(t, expected, tol=1e-6):
    np.testing.assert_allclose(np.asarray(t), expected, rtol=tol, atol=tol)


# -- 002: autodiff basics ---------------------------------------------------------------------

def test_gradient_tape_scalar():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


def test_persistent_tape_nested_sources_and_shapes():
    w = tf.Variable(tf.random.normal((3, 2)), name='w')
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
    x = [[1., 2., 3.]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y**2)
    [dl_dw, dl_db] = tape.gradient(loss, [w, b])
    assert str(w.shape) == "(3, 2)" and str(dl_dw.shape) == "(3, 2)"
    my_vars = {'w': w, 'b': b}
    grad = tape.gradient(loss, my_vars)
    expected_b = (2 * (np.array(x, np.float32) @ w.numpy() + b.numpy()) / 2)[0]
    close(grad['b'], expected_b, 1e-5)
    assert grad['b'].dtype == tf.float32
    assert repr(grad['b']).startswith("<tf.Tensor: shape=(2,), dtype=float32, numpy=array([")
    close(grad['w'], dl_dw)


def test_gradients_wrt_model():
    layer = tf.keras.layers.Dense(2, activation='relu')
    x = tf.constant([[1., 2., 3.]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y**2)
    grad = tape.gradient(loss, layer.trainable_variables)
    lines = [f'{var.name}, shape:{g.shape}' for var, g in zip(layer.trainable_variables, grad)]
    assert lines == ["dense/kernel:0, shape:(3, 2)", "dense/bias:0, shape:(2,)"]


def test_what_the_tape_watches():
    x0 = tf.Variable(3.0, name='x0')
    x1 = tf.Variable(3.0, name='x1', trainable=False)
    x2 = tf.Variable(2.0, name='x2') + 1.0
    x3 = tf.constant(3.0, name='x3')
    with tf.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert [str(g) for g in grad] == ["tf.Tensor(6.0, shape=(), dtype=float32)", "None", "None", "None"]
    assert [var.name for var in tape.watched_variables()] == ['x0:0']


def test_watch_a_constant():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    assert tape.gradient(y, x).numpy() == 6.0


def test_intermediate_results():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0


def test_persistent_tape_two_gradients():
    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert str(tape.gradient(z, x).numpy()) == "[  4. 108.]"
    assert str(tape.gradient(y, x).numpy()) == "[2. 6.]"
    del tape


def test_control_flow_picks_one_branch():
    x = tf.constant(1.0)
    v0 = tf.Variable(2.0)
    v1 = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1**2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert str(dv0) == "tf.Tensor(1.0, shape=(), dtype=float32)"
    assert dv1 is None
    assert tape.gradient(result, x) is None


def test_unconnected_gradient_is_none():
    x = tf.Variable(2.)
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None


def test_replacing_a_variable_with_a_tensor():
    x = tf.Variable(2.0)
    lines = []
    for epoch in range(2):
        with tf.GradientTape() as tape:
            y = x + 1
        lines.append(f"{type(x).__name__} : {tape.gradient(y, x)}")
        x = x + 1
    assert lines == ["ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32)", "EagerTensor : None"]


def test_numpy_calls_are_recorded():
    # TF prints None here; dualtape records np.mean on a tensor (a deliberate improvement).
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with tf.GradientTape() as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    g = tape.gradient(y, x)
    close(g, np.array([[1.0, 2.0], [3.0, 4.0]]) / 2)
    assert g.dtype == tf.float32


def test_integer_gradient_is_none_with_warning():
    x = tf.constant(10)
    with tf.GradientTape() as g:
        with pytest.warns(UserWarning, match="must be floating"):
            g.watch(x)
        y = x * x
    with pytest.warns(UserWarning, match="target tensor must be floating"):
        assert g.gradient(y, x) is None


def test_stateful_assign_stops_gradient():
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        x1.assign_add(x0)
        y = x1**2
    assert tape.gradient(y, x0) is None
    assert x1.numpy() == 3.0


def test_no_gradient_registered_lookup_error():
    image = tf.Variable([[[0.5, 0.0, 0.0]]])
    delta = tf.Variable(0.1)
    with tf.GradientTape() as tape:
        new_image = tf.image.adjust_contrast(image, delta)
    with pytest.raises(LookupError) as e:
        tape.gradient(new_image, [image, delta])
    assert f'{type(e.value).__name__}: {e.value}' == \
        "LookupError: gradient registry has no entry for: AdjustContrastv2"


def test_zeros_instead_of_none():
    x = tf.Variable([2., 2.])
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y**2
    g = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert str(g) == "tf.Tensor([0. 0.], shape=(2,), dtype=float32)"


# -- 000 / 001: advanced autodiff ----------------------------------------------------------

def test_stop_recording():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_reset():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_stop_gradient():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_custom_gradient_clips():
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"


def test_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25


@pytest.mark.parametrize("outer_first", [True, False])
def test_higher_order_gradients(outer_first):
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0


def test_input_gradient_regularization():
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x)**2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [tuple(var.shape) for var in dg1_mag] == [(5, 10), (10,)]
    assert repr(dg1_mag[0].shape) == "TensorShape([5, 10])"
    # check against finite differences of the input-gradient norm in the bias
    def mag(bias):
        pre = x.numpy() @ layer.kernel.numpy() + bias
        g = (2 * np.maximum(pre, 0) * (pre > 0)) @ layer.kernel.numpy().T
        return np.sqrt(np.sum(g.astype(np.float64) ** 2))
    b = layer.bias.numpy().astype(np.float64)
    eps = 1e-3
    fd = [(mag(b + eps * e) - mag(b - eps * e)) / (2 * eps) for e in np.eye(10)]
    close(dg1_mag[1], fd, 2e-2)


def test_jacobian_scalar_source():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert str(y.shape) == "(201,)" and str(dy_dx.shape) == "(201,)"
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    close(dy_dx, s * (1 - s), 1e-6)


def test_jacobian_tensor_source():
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    assert tuple(y.shape) == (7, 10)
    assert tuple(layer.kernel.shape) == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert tuple(j.shape) == (7, 10, 5, 10)
    g = tape.gradient(y, layer.kernel)
    assert tuple(g.shape) == (5, 10)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3


def test_hessian_and_newton_step():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    assert f'layer.kernel.shape: {layer1.kernel.shape}' == "layer.kernel.shape: (5, 8)"
    assert f'h.shape: {h.shape}' == "h.shape: (5, 8, 5, 8)"
    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    close(h_mat, np.transpose(h_mat.numpy()), 1e-5)  # symmetric
    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    before = layer1.kernel.numpy()
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    close(before - layer1.kernel.numpy(), np.reshape(update.numpy(), (5, 8)), 1e-6)


def _plot_as_patches_image(j):
    j = tf.transpose(j, [1, 0, 3, 2])
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    s = j.shape
    return tf.reshape(j, [s[0] * s[1], s[2] * s[3]])


def test_batch_jacobian():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    assert tuple(y.shape) == (7, 6)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (7, 6, 7, 5)
    off_diagonal = j.numpy()[:, 0, :, 0] * (1 - np.eye(7))
    assert np.all(off_diagonal == 0)
    assert tuple(_plot_as_patches_image(j).shape) == (6 * 9, 5 * 9)
    j_sum = tf.reduce_sum(j, axis=2)
    assert tuple(j_sum.shape) == (7, 6, 5)
    j_select = tf.einsum('bxby->bxy', j)
    assert tuple(j_select.shape) == (7, 6, 5)
    jb = tape.batch_jacobian(y, x)
    assert tuple(jb.shape) == (7, 6, 5)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    close(j_select, j_sum)


def test_batch_jacobian_with_batch_norm_runs():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j = tape.jacobian(y, x)
    assert f'j.shape: {j.shape}' == "j.shape: (7, 6, 7, 5)"
    off_diagonal = j.numpy()[:, 0, :, 0] * (1 - np.eye(7))
    assert np.any(off_diagonal != 0)  # batch norm couples the examples
    jb = tape.batch_jacobian(y, x)
    assert f'jb.shape: {jb.shape}' == "jb.shape: (7, 6, 5)"


# -- 003: basics (Russian edition) ---------------------------------------------------------

def test_multiply_and_intermediate():
    x = tf.constant([3.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        z = tf.multiply(x, x)
    assert str(z) == "tf.Tensor([9. 9.], shape=(2,), dtype=float32)"
    assert str(t.gradient(z, x)) == "tf.Tensor([6. 6.], shape=(2,), dtype=float32)"
    x = tf.constant([3.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.multiply(x, x)
        z = tf.multiply(y, y)
    assert str(t.gradient(z, y)) == "tf.Tensor([18. 18.], shape=(2,), dtype=float32)"


def test_watched_variables_in_creation_order():
    # The guide: "you can list them in the order of their creation" (TF sorts by variable id).
    # regression: #10, they came back in the order of first use, (y, x)
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y * y
        z = x + y_sq
    assert [v is w for v, w in zip(t.watched_variables(), (x, y))] == [True, True]


def test_control_flow_in_python_function():
    def f(x, y):
        output = 1.0
        for i in range(y):
            if i > 1 and i < 5:
                output = tf.multiply(output, x)
        return output

    def grad(x, y):
        with tf.GradientTape() as t:
            t.watch(x)
            out = f(x, y)
        return t.gradient(out, x)

    x = tf.constant(2.0)
    assert grad(x, 6).numpy() == 12.0
    assert grad(x, 5).numpy() == 12.0
    assert grad(x, 4).numpy() == 4.0


def test_int8_variable_gradient_is_none():
    with pytest.warns(UserWarning):
        with tf.GradientTape() as tape:
            x = tf.Variable([[2, 2], [2, 2]], dtype=tf.int8)
            y = x * x
        assert tape.gradient(y, x) is None


def test_target_is_a_variable():
    x = tf.Variable(2.)
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(x, y) is None
    with tf.GradientTape() as tape:
        z = y * y
    g = tape.gradient(x, y, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert str(g) == "tf.Tensor(0.0, shape=(), dtype=float32)"
    del z


def test_watch_accessed_variables_false():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False, persistent=True) as t:
        t.watch(y)
        y_sq = y * y
        z = x + y_sq
    assert t.gradient(z, x) is None
    assert t.gradient(z, y).numpy() == 6.0


def test_gradient_inside_stop_recording_and_reset():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        y_sq = y * y
        with t.stop_recording():
            assert t.gradient(y_sq, y).numpy() == 6.0
        z = x + y_sq
        t.reset()
    assert t.gradient(z, y) is None
