"""keras.Model, Sequential and the functional API: building, calling, `training=`, summary,
compile/fit/evaluate/predict (and their printed progress), callbacks, weights, datasets.

Values against TensorFlow are in test_keras_tutorials.py and test_keras_units.py; this file
checks the API's behaviour and Keras' printed formats (the summary table verbatim, as Keras
3.15 prints it; the progress line by its format, not its timings).
"""

import re

import numpy as np
import pytest

import dualtape as tf
from dualtape import keras

RNG = np.random.default_rng(0)
X = RNG.random((40, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 40)


@pytest.fixture(autouse=True)
def _fresh_names():
    keras.backend.clear_session()
    tf.random.set_seed(0)


def small_classifier():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def test_import_forms():
    import dualtape.keras
    from dualtape.keras import layers
    from dualtape.keras.layers import Dense
    assert dualtape.keras is tf.keras and layers is tf.keras.layers and Dense is tf.keras.layers.Dense
    assert tf.layers is tf.keras.layers  # the old flat path is the same module


# -- summary -------------------------------------------------------------------------------------

SEQUENTIAL_SUMMARY = """\
Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense (Dense)                   │ (None, 8)              │            40 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_1 (Dense)                 │ (None, 3)              │            27 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 67 (268.00 B)
 Trainable params: 67 (268.00 B)
 Non-trainable params: 0 (0.00 B)"""

FUNCTIONAL_SUMMARY = """\
Model: "functional"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ digits (InputLayer)             │ (None, 784)            │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense (Dense)                   │ (None, 64)             │        50,240 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_1 (Dense)                 │ (None, 64)             │         4,160 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ predictions (Dense)             │ (None, 10)             │           650 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 55,050 (215.04 KB)
 Trainable params: 55,050 (215.04 KB)
 Non-trainable params: 0 (0.00 B)"""

SUBCLASSED_SUMMARY = """\
Model: "m"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense (Dense)                   │ (2, 3)                 │            15 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ batch_normalization             │ (2, 3)                 │            12 │
│ (BatchNormalization)            │                        │               │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 27 (108.00 B)
 Trainable params: 21 (84.00 B)
 Non-trainable params: 6 (24.00 B)"""


def summary_text(model):
    lines = []
    model.summary(print_fn=lines.append)
    return "\n".join(lines)


def test_summaries_are_keras_tables():
    assert summary_text(small_classifier()) == SEQUENTIAL_SUMMARY
    keras.backend.clear_session()
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    assert summary_text(keras.Model(inputs=inputs, outputs=outputs)) == FUNCTIONAL_SUMMARY
    keras.backend.clear_session()

    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = keras.layers.Dense(3)
            self.bn = keras.layers.BatchNormalization()

        def call(self, x):
            return self.bn(self.d(x))

    m = M()
    m(np.zeros((2, 4), np.float32))
    assert summary_text(m) == SUBCLASSED_SUMMARY


# -- fit's printed progress ----------------------------------------------------------------------

STEP = r"\d+(?:us|ms|s)/step"
VALUE = r"\d+\.\d{4}"


def test_fit_prints_keras_progress_lines(capsys):
    model = small_classifier()
    history = model.fit(X, Y, epochs=2, batch_size=16, shuffle=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    for line, epoch in ((lines[1], 0), (lines[3], 1)):
        match = re.fullmatch(rf"3/3 ━{{20}} \d+s {STEP} - accuracy: ({VALUE}) - loss: ({VALUE})", line)
        assert match, line
        assert float(match[1]) == pytest.approx(history.history["accuracy"][epoch], abs=5e-5)
        assert float(match[2]) == pytest.approx(history.history["loss"][epoch], abs=5e-5)
    assert sorted(history.history) == ["accuracy", "loss"] and len(history.history["loss"]) == 2


def test_fit_verbose_2_prints_one_line_per_epoch_with_validation(capsys):
    model = small_classifier()
    history = model.fit(X, Y, epochs=2, batch_size=16, verbose=2, validation_split=0.25)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0::2] == ["Epoch 1/2", "Epoch 2/2"]
    for line in lines[1::2]:
        assert re.fullmatch(rf"2/2 - \d+s - {STEP} - accuracy: {VALUE} - loss: {VALUE} - val_accuracy: {VALUE} "
                            rf"- val_loss: {VALUE}", line), line
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]


def test_verbose_0_is_silent_and_evaluate_predict_print_their_line(capsys):
    model = small_classifier()
    model.fit(X, Y, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""
    loss, accuracy = model.evaluate(X, Y, batch_size=16)
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(rf"3/3 ━{{20}} \d+s {STEP} - accuracy: {VALUE} - loss: {VALUE}", line), line
    assert f"loss: {loss:.4f}" in line and f"accuracy: {accuracy:.4f}" in line
    assert model.predict(X[:5]).shape == (5, 3)
    assert re.fullmatch(rf"1/1 ━{{20}} \d+s {STEP}", capsys.readouterr().out.strip())


# -- fit is the loop a user would write -------------------------------------------------------

def test_fit_takes_the_steps_of_a_hand_written_gradient_tape_loop():
    model = small_classifier()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    twin = small_classifier()
    twin.set_weights(model.get_weights())
    history = model.fit(X, Y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    optimizer = keras.optimizers.Adam(0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    epoch_losses = []
    for epoch in range(2):
        mean = keras.metrics.Mean()
        for start in range(0, 40, 16):
            x, y = X[start:start + 16], Y[start:start + 16]
            with tf.GradientTape() as tape:
                loss = loss_fn(y, twin(x, training=True))
            grads = tape.gradient(loss, twin.trainable_variables)
            optimizer.apply_gradients(zip(grads, twin.trainable_variables))
            mean.update_state(loss, sample_weight=len(x))
        epoch_losses.append(float(mean.result()))
    for a, b in zip(model.get_weights(), twin.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(history.history["loss"], epoch_losses, rtol=1e-6)


def test_fit_on_a_dataset_equals_fit_on_arrays():
    model, twin = small_classifier(), small_classifier()
    twin.set_weights(model.get_weights())
    a = model.fit(X, Y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    b = twin.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(16), epochs=2, verbose=0)
    np.testing.assert_allclose(a.history["loss"], b.history["loss"], rtol=1e-6)
    c = small_classifier()
    c.set_weights(twin.get_weights())
    c.fit([(X[i:i + 16], Y[i:i + 16]) for i in range(0, 40, 16)], epochs=1, verbose=0)  # any iterable of batches


def test_accuracy_resolves_by_the_loss_shapes_as_keras_does():
    def metric_type(y, units, loss):
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)])
        model.compile(optimizer="sgd", loss=loss, metrics=["accuracy"])
        model.fit(X, y, epochs=1, verbose=0)
        return type(model.metrics[1].metrics[0]).__name__, model.metrics[1].metrics[0].name

    assert metric_type(Y, 3, "sparse_categorical_crossentropy") == ("SparseCategoricalAccuracy", "accuracy")
    assert metric_type(np.eye(3)[Y], 3, "categorical_crossentropy") == ("CategoricalAccuracy", "accuracy")
    assert metric_type((Y > 0).astype(np.float32)[:, None], 1, "binary_crossentropy") == ("BinaryAccuracy", "accuracy")


def test_training_flag_reaches_nested_layers():
    seen = []

    class Probe(keras.layers.Layer):
        def call(self, x, training=None):
            seen.append(training)
            return x

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.inner = keras.Sequential([Probe(), keras.layers.Dropout(0.5), keras.layers.Dense(1)])

        def call(self, x):  # no training argument: the outer call's value still reaches the layers
            return self.inner(x)

    net = Net()
    net.compile(optimizer="sgd", loss="mse")
    net.fit(X, Y.astype(np.float32), epochs=1, batch_size=40, verbose=0)
    net.predict(X, batch_size=40, verbose=0)
    assert seen == [True, False]
    ones = np.ones((1000, 4), np.float32)
    dropped = keras.layers.Dropout(0.5)(ones, training=True).numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0} and 0.45 < (dropped == 0).mean() < 0.55
    np.testing.assert_array_equal(keras.layers.Dropout(0.5)(ones).numpy(), ones)


def test_functional_model_with_two_inputs():
    a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(2,), name="b")
    merged = keras.layers.Concatenate()([keras.layers.Dense(4)(a), b])
    model = keras.Model([a, b], keras.layers.Dense(1)(merged))
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "InputLayer", "Dense", "Concatenate",
                                                               "Dense"]
    out = model([np.ones((5, 3)), np.ones((5, 2))])
    assert out.shape == (5, 1) and out.dtype == tf.float32
    with pytest.raises(ValueError, match=r"expects samples of shape \(3,\)"):
        model([np.ones((5, 4)), np.ones((5, 2))])
    with pytest.raises(TypeError, match="only keras layers can be called"):
        a + 1.0


def test_batch_normalization_in_fit_updates_moving_statistics_and_frozen_layers_keep_weights():
    model = keras.Sequential([keras.Input((4,)), keras.layers.BatchNormalization(), keras.layers.Dense(1)])
    model.layers[1].trainable = False
    frozen = model.layers[1].get_weights()
    assert [v.name for v in model.trainable_weights] == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    model.compile(optimizer="sgd", loss="mse")
    model.fit(X, Y.astype(np.float32), epochs=1, verbose=0)
    bn = model.layers[0]
    assert not np.allclose(bn.moving_mean.numpy(), 0.0)
    for a, b in zip(frozen, model.layers[1].get_weights()):
        np.testing.assert_array_equal(a, b)
    assert len(model.non_trainable_weights) == 4


def test_callbacks_and_early_stopping():
    epochs_seen = []
    model = small_classifier()
    history = model.fit(X, Y, epochs=30, verbose=0, validation_data=(X, Y),
                        callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: epochs_seen.append(e)),
                                   keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0)])
    assert epochs_seen == [0, 1] and len(history.history["val_loss"]) == 2 and model.stop_training


def test_weights_round_trip_and_clear_errors(tmp_path):
    model = small_classifier()
    path = tmp_path / "w.pkl"
    model.save_weights(path)
    saved = model.get_weights()
    model.set_weights([w + 1 for w in saved])
    model.load_weights(path)
    for a, b in zip(saved, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"expected 4 arrays"):
        model.set_weights(saved[:2])
    with pytest.raises(ValueError, match=r"has shape \(4, 8\), got an array of shape \(8, 4\)"):
        model.set_weights([saved[0].T] + saved[1:])
    with pytest.raises(RuntimeError, match="You must call `compile\\(\\)`"):
        keras.Sequential([keras.layers.Dense(1)]).fit(X, Y)
    with pytest.raises(ValueError, match="unknown optimizer 'adamm'"):
        model.compile(optimizer="adamm")
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        keras.losses.sparse_categorical_crossentropy([3], [[0.1, 0.2, 0.7]])


def test_datasets_read_the_local_cache_and_never_download(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"mnist.npz is not there, and dualtape does not download"):
        keras.datasets.mnist.load_data()
    with pytest.raises(FileNotFoundError, match="cifar10"):
        keras.datasets.cifar10.load_data()
    (tmp_path / "datasets").mkdir()
    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    np.savez(tmp_path / "datasets" / "mnist.npz", x_train=images, y_train=np.array([3, 1], np.uint8),
             x_test=images[:1], y_test=np.array([7], np.uint8))
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    np.testing.assert_array_equal(x_train, images)
    assert y_train.tolist() == [3, 1] and x_test.shape == (1, 28, 28) and y_test.tolist() == [7]


def test_to_categorical():
    np.testing.assert_array_equal(keras.utils.to_categorical([[1], [0], [2]], 4),
                                  [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]])
    assert keras.utils.to_categorical(np.array([0, 2])).shape == (2, 3)


def test_a_tf_keras_2_train_step_reports_its_true_loss():
    """compiled_loss / compiled_metrics, as tf.keras 2 code writes them: "loss" is the epoch's
    mean loss (Keras 3.15 reports the mean prediction under that name here)."""

    class CustomModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(4,))
    model = CustomModel(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse", metrics=["mae"])  # no step: fixed weights
    y = Y.astype(np.float32)[:, None]
    history = model.fit(X, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    prediction = model.predict(X, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [np.mean((prediction - y) ** 2)], rtol=1e-5)
    np.testing.assert_allclose(history.history["mae"], [np.mean(np.abs(prediction - y))], rtol=1e-5)


def test_layer_names_follow_keras_rule():
    names = [keras.layers.Conv2D(1, 1).name, keras.layers.ReLU().name, keras.layers.MaxPooling2D().name,
             keras.layers.BatchNormalization().name, keras.layers.Conv2D(1, 1).name]
    assert names == ["conv2d", "re_lu", "max_pooling2d", "batch_normalization", "conv2d_1"]


def test_losses_compute_in_float32_and_name_mismatched_shapes():
    y_true, y_pred = np.array([[0.1, 0.2]]), np.array([[0.3, 0.7]])  # float64 arrays, as Keras: a float32 loss
    assert keras.losses.MeanSquaredError()(y_true, y_pred).dtype == tf.float32
    with pytest.raises(ValueError, match=r"\[mean_squared_error\] y_true of shape \(4, 3\) does not match y_pred "
                                         r"of shape \(4, 2\)"):
        keras.losses.MeanSquaredError()(np.zeros((4, 3)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"\[accuracy\] y_true of shape \(2,\) does not match y_pred of shape \(3,\)"):
        keras.metrics.Accuracy().update_state([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"\[categorical_crossentropy\].*use sparse_categorical_crossentropy"):
        keras.losses.CategoricalCrossentropy()([0, 1], np.ones((2, 3)) / 3)
    with pytest.raises(ValueError, match=r"\[dense\] expected inputs with last dimension 4"):
        layer = keras.layers.Dense(2)
        layer(np.zeros((1, 4)))
        layer(np.zeros((1, 5)))


def test_named_inputs_by_dict_and_a_generator_with_steps_per_epoch():
    a, b = keras.Input(shape=(3,), name="zeta"), keras.Input(shape=(2,), name="alpha")
    model = keras.Model([a, b], keras.layers.Concatenate()([a, b]))
    out = model({"alpha": np.ones((1, 2)), "zeta": np.zeros((1, 3))}).numpy()
    np.testing.assert_array_equal(out, [[0, 0, 0, 1, 1]])  # matched by name, not by sorted key
    with pytest.raises(ValueError, match=r"missing \['alpha'\]"):
        model({"zeta": np.zeros((1, 3))})

    def forever():
        while True:
            yield X[:8], Y[:8]

    history = small_classifier().fit(forever(), steps_per_epoch=3, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_summary_counts_the_optimizer_state_after_training():
    """Keras 3.15 prints these three lines for this model after fit with 'sgd', then 'adam'."""
    for optimizer, tail in (("sgd", [" Total params: 69 (280.00 B)", " Trainable params: 67 (268.00 B)",
                                     " Non-trainable params: 0 (0.00 B)", " Optimizer params: 2 (12.00 B)"]),
                            ("adam", [" Total params: 203 (816.00 B)", " Trainable params: 67 (268.00 B)",
                                      " Non-trainable params: 0 (0.00 B)", " Optimizer params: 136 (548.00 B)"])):
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
        assert summary_text(model).splitlines()[-3:] == [" Total params: 67 (268.00 B)"] + tail[1:3]  # no state yet
        model.fit(X, Y, verbose=0)
        assert summary_text(model).splitlines()[-4:] == tail


def test_build_by_hand_and_the_weight_attributes():
    model = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(1, use_bias=False)])
    model.build((None, 5))
    assert [tuple(w.shape) for w in model.get_weights()] == [(5, 3), (3,), (3, 1)]
    dense = model.layers[0]
    assert dense.kernel is model.trainable_variables[0] and dense.bias is model.trainable_variables[1]
    assert model.layers[1].bias is None and model.count_params() == 21

    layer = keras.layers.LayerNormalization()
    layer.build((None, 4))
    assert layer.built and [w.name for w in layer.weights] == ["layer_normalization/gamma:0",
                                                               "layer_normalization/beta:0"]

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = [keras.layers.Dense(4), keras.layers.Dense(2)]

        def call(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    net = Net()
    net.build((None, 3))
    assert [w.name for w in net.trainable_weights] == ["dense_2/kernel:0", "dense_2/bias:0", "dense_3/kernel:0",
                                                      "dense_3/bias:0"]
    assert net.non_trainable_weights == [] and len(net.layers) == 2


def test_a_layer_called_on_nested_python_numbers_takes_them_as_one_float32_array():
    out = keras.layers.Dense(2, kernel_initializer="ones")([[1.0, 2.0]])
    assert out.dtype == tf.float32 and out.numpy().tolist() == [[3.0, 3.0]]
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit([[1.0, 2.0], [3.0, 4.0]], [0.5, 1.5], epochs=2, verbose=0)  # lists are arrays here
    assert len(history.history["loss"]) == 2 and model.predict([[1.0, 2.0]], verbose=0).shape == (1, 1)


def test_fashion_mnist_and_cifar10_read_keras_cache_files(tmp_path, monkeypatch):
    import gzip
    import pickle
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    folder = tmp_path / "datasets" / "fashion-mnist"
    folder.mkdir(parents=True)
    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    for prefix, n in (("train", 3), ("t10k", 2)):
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(bytes(8) + bytes(range(n)))
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(bytes(16) + images[:n].tobytes())
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, images)
    assert y_train.tolist() == [0, 1, 2] and x_test.shape == (2, 28, 28) and y_test.tolist() == [0, 1]

    batches = tmp_path / "datasets" / "cifar-10-batches-py-target" / "cifar-10-batches-py"
    batches.mkdir(parents=True)
    data = np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with open(batches / name, "wb") as f:
            pickle.dump({b"data": data, b"labels": [4, 9]}, f)
    (x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and y_train.shape == (10, 1) and x_test.shape == (2, 32, 32, 3)
    np.testing.assert_array_equal(x_test[0, :, :, 0].ravel(), data[0, :1024])  # channels last, as Keras
    assert y_test.ravel().tolist() == [4, 9]
    with open(batches / "test_batch", "wb") as f:
        pickle.dump({b"data": data, b"labels": __import__("os").system}, f)  # not data: refused, never called
    with pytest.raises(pickle.UnpicklingError, match="refusing to load"):
        keras.datasets.cifar10.load_data()


def test_model_checkpoint_saves_the_best_weights(tmp_path):
    model = small_classifier()
    checkpoint = keras.callbacks.ModelCheckpoint(str(tmp_path / "w.{epoch:02d}.weights.h5"), monitor="loss",
                                                 save_best_only=True, save_weights_only=True)
    history = model.fit(X, Y, epochs=3, verbose=0, shuffle=False, callbacks=[checkpoint])
    saved = sorted(p.name for p in tmp_path.iterdir())
    best = int(np.argmin(history.history["loss"])) + 1
    assert saved[-1] == f"w.{best:02d}.weights.h5" and checkpoint.best == min(history.history["loss"])
    with pytest.raises(ValueError, match="save_weights_only=True"):
        keras.callbacks.ModelCheckpoint("m.keras")
    with pytest.raises(ValueError, match="no TensorBoard logs"):
        keras.callbacks.TensorBoard(log_dir="logs")


def test_two_outputs_take_one_loss_each():
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, [keras.layers.Dense(1)(inputs), keras.layers.Dense(3)(inputs)])
    y = [Y.astype(np.float32)[:, None], Y]
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="2 outputs but one loss"):
        model.fit(X, y, verbose=0)
    model.compile(optimizer="sgd", loss=["mse", keras.losses.SparseCategoricalCrossentropy(from_logits=True)],
                  loss_weights=[1.0, 0.5])
    first, second = model(X)
    expected = (keras.losses.MeanSquaredError()(y[0], first)
                + 0.5 * keras.losses.SparseCategoricalCrossentropy(from_logits=True)(Y, second))
    np.testing.assert_allclose(model.evaluate(X, y, batch_size=40, verbose=0), expected.numpy(), rtol=1e-6)
