"""Losses, metrics, initializers and layers on fixed inputs, written once and run by either
library (not a test): TensorFlow/Keras 3 in tests/keras_units_recorder.py, dualtape in
tests/test_keras_units.py. Each case returns plain lists: values and, for losses and layers,
the gradients of `sum(output * cotangent)` with respect to the inputs and the weights.
"""

import numpy as np

RNG_SEED = 11


def arrays():
    rng = np.random.default_rng(RNG_SEED)
    f32 = np.float32
    return {
        "y_true_reg": rng.standard_normal((4, 3)).astype(f32),
        "y_pred_reg": rng.standard_normal((4, 3)).astype(f32),
        "y_true_bin": rng.integers(0, 2, (4, 3)).astype(f32),
        "y_pred_prob": rng.uniform(0.02, 0.98, (4, 3)).astype(f32),
        "logits": (2 * rng.standard_normal((4, 3))).astype(f32),
        "labels": np.array([0, 2, 1, 2]),
        "onehot": np.eye(3, dtype=f32)[[0, 2, 1, 2]],
        "weights": np.array([1.0, 0.5, 0.0, 2.0], f32),
        "images": rng.standard_normal((2, 5, 6, 3)).astype(f32),
        "rows": rng.standard_normal((3, 4)).astype(f32),
        "ids": np.array([[1, 4, 0], [3, 3, 2]]),
        "sequences": rng.standard_normal((2, 7, 3)).astype(f32),
    }


def listed(x):
    return np.asarray(x, np.float64).ravel().tolist()


def loss_cases(tf, keras):
    a = arrays()
    L = keras.losses
    cases = {
        "mse": (L.MeanSquaredError(), "y_true_reg", "y_pred_reg"),
        "mae": (L.MeanAbsoluteError(), "y_true_reg", "y_pred_reg"),
        "huber": (L.Huber(), "y_true_reg", "y_pred_reg"),
        "huber_delta_half": (L.Huber(delta=0.5), "y_true_reg", "y_pred_reg"),
        "bce": (L.BinaryCrossentropy(), "y_true_bin", "y_pred_prob"),
        "bce_logits": (L.BinaryCrossentropy(from_logits=True), "y_true_bin", "logits"),
        "bce_smoothing": (L.BinaryCrossentropy(label_smoothing=0.1), "y_true_bin", "y_pred_prob"),
        "cce": (L.CategoricalCrossentropy(), "onehot", "y_pred_prob"),
        "cce_logits": (L.CategoricalCrossentropy(from_logits=True), "onehot", "logits"),
        "cce_smoothing": (L.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2), "onehot", "logits"),
        "scce": (L.SparseCategoricalCrossentropy(), "labels", "y_pred_prob"),
        "scce_logits": (L.SparseCategoricalCrossentropy(from_logits=True), "labels", "logits"),
        "mse_sum": (L.MeanSquaredError(reduction="sum"), "y_true_reg", "y_pred_reg"),
        "mse_none": (L.MeanSquaredError(reduction=None), "y_true_reg", "y_pred_reg"),
        "scce_none": (L.SparseCategoricalCrossentropy(from_logits=True, reduction="none"), "labels", "logits"),
    }
    out = {}
    for name, (loss, t, p) in cases.items():
        for weighted in (False, True):
            y_pred = tf.constant(a[p])
            with tf.GradientTape() as tape:
                tape.watch(y_pred)
                value = loss(a[t], y_pred, sample_weight=a["weights"] if weighted else None)
                total = tf.reduce_sum(value)
            out[name + ("_weighted" if weighted else "")] = {"value": listed(value),
                                                             "grad": listed(tape.gradient(total, y_pred))}
    functions = {"mean_squared_error": ("y_true_reg", "y_pred_reg"), "mean_absolute_error": ("y_true_reg", "y_pred_reg"),
                 "binary_crossentropy": ("y_true_bin", "y_pred_prob"),
                 "categorical_crossentropy": ("onehot", "y_pred_prob"),
                 "sparse_categorical_crossentropy": ("labels", "y_pred_prob"), "huber": ("y_true_reg", "y_pred_reg")}
    for name, (t, p) in functions.items():
        out["fn_" + name] = {"value": listed(getattr(L, name)(a[t], a[p]))}
    return out


def metric_cases(tf, keras):
    a = arrays()
    M = keras.metrics
    cases = {
        "accuracy": (M.Accuracy(), a["labels"], np.array([0, 1, 1, 2])),
        "binary_accuracy": (M.BinaryAccuracy(), a["y_true_bin"], a["y_pred_prob"]),
        "categorical_accuracy": (M.CategoricalAccuracy(), a["onehot"], a["logits"]),
        "sparse_categorical_accuracy": (M.SparseCategoricalAccuracy(), a["labels"], a["logits"]),
        "mae": (M.MeanAbsoluteError(), a["y_true_reg"], a["y_pred_reg"]),
        "mse": (M.MeanSquaredError(), a["y_true_reg"], a["y_pred_reg"]),
        "rmse": (M.RootMeanSquaredError(), a["y_true_reg"], a["y_pred_reg"]),
    }
    out = {}
    for name, (metric, y_true, y_pred) in cases.items():
        metric.update_state(y_true, y_pred)
        first = float(metric.result())
        metric.update_state(y_true[:3], y_pred[:3][::-1], sample_weight=a["weights"][:3])
        second = float(metric.result())
        metric.reset_state()
        out[name] = {"results": [first, second, float(metric.result())], "name": metric.name}
    auc = M.AUC()
    auc.update_state(a["y_true_bin"], a["y_pred_prob"])
    first = float(auc.result())
    auc.update_state(a["y_true_bin"][:3], a["y_pred_prob"][::-1][:3], sample_weight=a["weights"][:3])
    out["auc"] = {"results": [first, float(auc.result())], "name": auc.name}
    coarse = M.AUC(num_thresholds=5, from_logits=True)
    coarse.update_state(a["y_true_bin"], a["logits"])
    out["auc_coarse_logits"] = {"results": [float(coarse.result())], "name": coarse.name}
    for cls in (M.Precision, M.Recall):
        for kwargs in ({}, {"thresholds": 0.3}):
            metric = cls(**kwargs)
            metric.update_state(a["y_true_bin"], a["y_pred_prob"])
            first = float(metric.result())
            metric.update_state(a["y_true_bin"][:3], a["y_pred_prob"][::-1][:3], sample_weight=a["weights"][:3])
            out[metric.name] = {"results": [first, float(metric.result())], "name": metric.name}
    mean, total = M.Mean(), M.Sum()
    for values, weights in (([1.0, 3.0, 5.0, 7.0], None), ([2.0, 4.0], [0.5, 1.5]), (a["rows"], a["weights"][:3])):
        mean.update_state(values, sample_weight=weights)
        total.update_state(values, sample_weight=weights)
    out["mean"] = {"results": [float(mean.result())], "name": mean.name}
    out["sum"] = {"results": [float(total.result())], "name": total.name}
    return out


def initializer_cases(tf, keras):
    I = keras.initializers
    return {"zeros": listed(I.Zeros()((2, 3))), "ones": listed(I.Ones()((2, 2))),
            "constant": listed(I.Constant(0.7)((3,))), "identity": listed(I.Identity(gain=2.0)((2, 3))),
            "string_names": [type(I.get(name)).__name__ for name in
                             ("glorot_uniform", "glorot_normal", "he_normal", "he_uniform", "lecun_normal", "zeros",
                              "ones", "random_normal", "random_uniform", "truncated_normal", "orthogonal")]}


def layer_cases(tf, keras):
    a = arrays()
    K = keras.layers
    images, rows, sequences = a["images"], a["rows"], a["sequences"]
    cases = {
        "dense": (lambda: K.Dense(5, activation="tanh"), rows),
        "conv_valid": (lambda: K.Conv2D(4, 3), images),
        "conv_same_strided": (lambda: K.Conv2D(3, (3, 2), strides=2, padding="same", activation="relu"), images),
        "conv_dilated": (lambda: K.Conv2D(2, 2, dilation_rate=2, use_bias=False), images),
        "maxpool_valid": (lambda: K.MaxPooling2D(), images),
        "maxpool_same": (lambda: K.MaxPooling2D(pool_size=3, strides=2, padding="same"), images),
        "avgpool_valid": (lambda: K.AveragePooling2D(pool_size=(2, 3)), images),
        "avgpool_same": (lambda: K.AveragePooling2D(pool_size=3, strides=2, padding="same"), images),
        "global_avg": (lambda: K.GlobalAveragePooling2D(), images),
        "conv1d_valid": (lambda: K.Conv1D(4, 3), sequences),
        "conv1d_same_strided": (lambda: K.Conv1D(2, 2, strides=2, padding="same", activation="relu"), sequences),
        "conv1d_causal_dilated": (lambda: K.Conv1D(3, 2, padding="causal", dilation_rate=2), sequences),
        "maxpool1d": (lambda: K.MaxPooling1D(pool_size=3, strides=2, padding="same"), sequences),
        "avgpool1d": (lambda: K.AveragePooling1D(pool_size=2), sequences),
        "global_avg_1d": (lambda: K.GlobalAveragePooling1D(), sequences),
        "global_max_1d": (lambda: K.GlobalMaxPooling1D(), sequences),
        "simple_rnn": (lambda: K.SimpleRNN(4), sequences),
        "simple_rnn_sequences_backwards": (lambda: K.SimpleRNN(3, return_sequences=True, go_backwards=True), sequences),
        "lstm": (lambda: K.LSTM(4), sequences),
        "lstm_sequences": (lambda: K.LSTM(3, return_sequences=True), sequences),
        "gru": (lambda: K.GRU(4), sequences),
        "gru_sequences_relu": (lambda: K.GRU(3, activation="relu", return_sequences=True), sequences),
        "bidirectional_lstm": (lambda: K.Bidirectional(K.LSTM(3)), sequences),
        "bidirectional_gru_sequences_sum": (lambda: K.Bidirectional(K.GRU(2, return_sequences=True), merge_mode="sum"),
                                            sequences),
        "layer_norm": (lambda: K.LayerNormalization(), rows),
        "batch_norm_train": (lambda: K.BatchNormalization(momentum=0.9), rows),
        "batch_norm_infer": (lambda: K.BatchNormalization(), rows),
        "flatten": (lambda: K.Flatten(), images),
        "reshape": (lambda: K.Reshape((2, 2)), rows),
        "softmax": (lambda: K.Softmax(), rows),
        "relu_capped": (lambda: K.ReLU(max_value=0.5, negative_slope=0.1), rows),
        "leaky_relu": (lambda: K.LeakyReLU(negative_slope=0.2), rows),
        "activation_gelu": (lambda: K.Activation("gelu"), rows),
        "activation_selu": (lambda: K.Activation("selu"), rows),
        "activation_elu": (lambda: K.Activation("elu"), rows),
        "activation_softplus": (lambda: K.Activation("softplus"), rows),
    }
    out = {}
    for name, (make, inputs) in cases.items():
        layer = make()
        x = tf.constant(inputs)
        layer(x)  # build
        rng = np.random.default_rng(len(name))
        layer.set_weights([(rng.uniform(0.5, 1.5, w.shape) if "variance" in w.name else 0.5 * rng.standard_normal(w.shape))
                           .astype(np.float32) for w in layer.weights])
        training = name == "batch_norm_train"
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=training) if "batch_norm" in name else layer(x)
            cotangent = np.random.default_rng(len(name) + 100).standard_normal(tuple(y.shape)).astype(np.float32)
            total = tf.reduce_sum(y * cotangent)
        grads = tape.gradient(total, [x] + list(layer.trainable_weights))
        out[name] = {"shape": list(y.shape), "value": listed(y), "grads": [listed(g) for g in grads],
                     "weights_after": [listed(w) for w in layer.non_trainable_weights]}
    embedding = K.Embedding(5, 2)
    embedding(a["ids"])
    embedding.set_weights([np.arange(10, dtype=np.float32).reshape(5, 2) / 10])
    with tf.GradientTape() as tape:
        y = embedding(a["ids"])
        total = tf.reduce_sum(y * np.arange(12, dtype=np.float32).reshape(2, 3, 2))
    grad = tape.gradient(total, embedding.trainable_weights)[0]
    out["embedding"] = {"shape": list(y.shape), "value": listed(y), "grads": [listed(tf.convert_to_tensor(grad))],
                        "weights_after": []}
    table = np.random.default_rng(30).standard_normal((20, 4)).astype(np.float32) * [1.0, 3.0, 0.5, 2.0] + 1.0
    for name, normalizer in (("normalization", K.Normalization()), ("normalization_all", K.Normalization(axis=None))):
        normalizer.adapt(table)
        x = tf.constant(rows)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = normalizer(x)
            total = tf.reduce_sum(y * np.arange(12, dtype=np.float32).reshape(3, 4))
        out[name] = {"shape": list(y.shape), "value": listed(y), "grads": [listed(tape.gradient(total, x))],
                     "weights_after": [listed(w) for w in normalizer.get_weights()]}
    rescaled = K.Rescaling(1.0 / 255, offset=-0.5)(np.arange(6, dtype=np.uint8).reshape(2, 3) * 40)
    out["rescaling"] = {"shape": list(rescaled.shape), "value": listed(rescaled), "grads": [], "weights_after": []}
    lstm = K.LSTM(2, return_state=True)
    lstm(tf.constant(sequences))
    rng = np.random.default_rng(21)
    lstm.set_weights([(0.5 * rng.standard_normal(w.shape)).astype(np.float32) for w in lstm.get_weights()])
    output, h, c = lstm(tf.constant(sequences))
    out["lstm_state"] = {"shape": list(output.shape), "value": listed(output) + listed(h) + listed(c),
                         "grads": [], "weights_after": []}
    fresh = K.LSTM(3)
    fresh(sequences)
    out["lstm_forget_bias"] = {"shape": [3 * 4], "value": listed(fresh.get_weights()[2]), "grads": [],
                               "weights_after": []}
    left, right = tf.constant(rows), tf.constant(rows[::-1] * 2)
    out["concatenate"] = {"shape": list(K.Concatenate()([left, right]).shape),
                          "value": listed(K.Concatenate(axis=0)([left, right])), "grads": [], "weights_after": []}
    out["add"] = {"shape": list(K.Add()([left, right]).shape), "value": listed(K.Add()([left, right])), "grads": [],
                  "weights_after": []}
    return out


CASES = [loss_cases, metric_cases, initializer_cases, layer_cases]
