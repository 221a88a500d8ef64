"""Four TensorFlow/Keras tutorials, written once and run by either library (not a test).

Each function takes the modules the tutorial imports as `tf` and `keras` (TensorFlow and
Keras 3 in tests/keras_tutorials_recorder.py, dualtape and dualtape.keras in
tests/test_keras_tutorials.py) and returns
what the tutorial prints or plots: losses, metrics, the first step's gradients. The code is
the tutorial's, on small synthetic data of its shapes, with initial weights set by
`set_weights` (or constant initial values) from a seeded NumPy generator, and without
shuffling, so both libraries start from, and see, the same numbers.

- "Custom training: walkthrough" (the penguins classifier): `custom_training_walkthrough`
- "Basic training loops": `basic_training_loop_module` (a tf.Module) and `basic_training_loop_keras`
- "Writing a training loop from scratch" (a functional MNIST model): `training_loop_from_scratch`
- "Customizing what happens in fit()": `customizing_fit_compute_loss`, `customizing_fit_own_metrics`
"""

import numpy as np


def initial_weights(model, seed, scale=0.3):
    """Fixed starting weights for every variable of `model`, the same in both libraries."""
    rng = np.random.default_rng(seed)
    model.set_weights([(scale * rng.standard_normal(w.shape)).astype(np.float32) for w in model.get_weights()])


def batches(tf, x, y, size):
    """The tutorials' `tf.data.Dataset.from_tensor_slices((x, y)).batch(size)`; a list of
    (x, y) batches where the library has no tf.data."""
    if hasattr(tf, "data"):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(size)
    return [(x[i:i + size], y[i:i + size]) for i in range(0, len(x), size)]


def function(tf):
    return getattr(tf, "function", lambda f: f)


def summary_of(gradient):
    """A gradient too large to record whole: its largest magnitude, its sum of squares and its
    first five entries. (Not its sum: a bias gradient after a softmax sums to zero, and its
    recorded sum would be rounding noise.)"""
    g = np.asarray(gradient, np.float64).ravel()
    return [float(np.abs(g).max()), float((g * g).sum())] + [float(v) for v in g[:5]]


# -- Custom training: walkthrough --------------------------------------------------------------

def penguins(seed=0, n=120):
    """Four standardized measurements and one of three species, as the penguins dataset."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    centers = np.array([[0.5, -0.3, 0.8, 0.1], [-0.6, 0.4, -0.2, 0.7], [0.2, 0.9, -0.5, -0.6]])
    features = (centers[labels] + 0.6 * rng.standard_normal((n, 4))).astype(np.float32)
    return features, labels.astype(np.int64)


def custom_training_walkthrough(tf, keras, epochs=5):
    features, labels = penguins()
    model = keras.Sequential([
        keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # input shape required
        keras.layers.Dense(10, activation=tf.nn.relu),
        keras.layers.Dense(3),
    ])
    initial_weights(model, 1)
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss(model, x, y, training):
        y_ = model(x, training=training)
        return loss_object(y_true=y, y_pred=y_)

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets, training=True)
        return loss_value, tape.gradient(loss_value, model.trainable_variables)

    optimizer = keras.optimizers.SGD(learning_rate=0.01)
    l0 = loss(model, features, labels, training=False)
    loss_value, grads = grad(model, features[:32], labels[:32])
    record = {"initial_loss": float(l0), "step_loss": float(loss_value),
              "step_grads": [np.asarray(g).ravel().tolist() for g in grads]}
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    record["loss_after_step"] = float(loss(model, features[:32], labels[:32], training=True))
    train_loss_results, train_accuracy_results = [], []
    for epoch in range(epochs):
        epoch_loss_avg = keras.metrics.Mean()
        epoch_accuracy = keras.metrics.SparseCategoricalAccuracy()
        for x, y in batches(tf, features, labels, 32):
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            epoch_loss_avg.update_state(loss_value)
            epoch_accuracy.update_state(y, model(x, training=True))
        train_loss_results.append(float(epoch_loss_avg.result()))
        train_accuracy_results.append(float(epoch_accuracy.result()))
    record["epoch_loss"], record["epoch_accuracy"] = train_loss_results, train_accuracy_results
    test_x, test_y = penguins(seed=5, n=40)
    test_accuracy = keras.metrics.Accuracy()
    logits = model(test_x, training=False)
    prediction = tf.argmax(logits, axis=1, output_type=tf.int64)
    test_accuracy(prediction, test_y)
    record["test_accuracy"] = float(test_accuracy.result())
    record["iterations"] = int(optimizer.iterations.numpy())
    return record


# -- Basic training loops ------------------------------------------------------------------------

def line_data(n=201):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(n).astype(np.float32)
    noise = rng.standard_normal(n).astype(np.float32)
    return x, x * 3.0 + 2.0 + noise


def basic_training_loop_module(tf, keras, epochs=10):
    x, y = line_data()

    class MyModel(tf.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

    def loss(target_y, predicted_y):
        return tf.reduce_mean(tf.square(target_y - predicted_y))

    model = MyModel()

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    weights, losses = [], []
    for epoch in range(epochs):
        train(model, x, y, learning_rate=0.1)
        weights.append([float(model.w.numpy()), float(model.b.numpy())])
        losses.append(float(loss(y, model(x))))
    return {"weights": weights, "losses": losses,
            "variables": [v.name for v in model.variables]}


def basic_training_loop_keras(tf, keras, epochs=10):
    x, y = line_data()

    class MyModelKeras(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            # The tutorial writes tf.Variable(5.0) and tf.Variable(0.0), which Keras 3 does not
            # track (it warns "The model does not have any trainable weights" and trains nothing);
            # weights made by add_weight are tracked by both.
            self.w = self.add_weight(shape=(), initializer=keras.initializers.Constant(5.0), name="w")
            self.b = self.add_weight(shape=(), initializer="zeros", name="b")

        def call(self, x):
            return self.w * x + self.b

    keras_model = MyModelKeras()
    keras_model.compile(run_eagerly=False, optimizer=keras.optimizers.SGD(learning_rate=0.1),
                        loss=keras.losses.mean_squared_error)
    history = keras_model.fit(x, y, epochs=epochs, batch_size=1000, verbose=0)
    return {"loss": history.history["loss"], "w": float(keras_model.w.numpy()), "b": float(keras_model.b.numpy())}


# -- Writing a training loop from scratch -------------------------------------------------------

def digits(seed, n):
    rng = np.random.default_rng(seed)
    return rng.random((n, 784)).astype(np.float32), rng.integers(0, 10, n).astype(np.int64)


def training_loop_from_scratch(tf, keras, epochs=2):
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    initial_weights(model, 3, scale=0.05)
    optimizer = keras.optimizers.SGD(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    x_train, y_train = digits(4, 256)
    x_val, y_val = digits(5, 128)
    train_dataset = batches(tf, x_train, y_train, 64)
    val_dataset = batches(tf, x_val, y_val, 64)

    @function(tf)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y, logits)
        return loss_value, grads

    @function(tf)
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    record = {"step_losses": [], "train_acc": [], "val_acc": []}
    for epoch in range(epochs):
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            loss_value, grads = train_step(x_batch_train, y_batch_train)
            record["step_losses"].append(float(loss_value))
            if epoch == 0 and step == 0:
                record["step_one_grads"] = [summary_of(g) for g in grads]
        record["train_acc"].append(float(train_acc_metric.result()))
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            test_step(x_batch_val, y_batch_val)
        record["val_acc"].append(float(val_acc_metric.result()))
        val_acc_metric.reset_state()
    record["weight_names"] = [w.name.split("/")[-1].split(":")[0] for w in model.trainable_weights]
    return record


# -- Customizing what happens in fit() ---------------------------------------------------------

def regression_data():
    rng = np.random.default_rng(6)
    return rng.random((256, 32)).astype(np.float32), rng.random((256, 1)).astype(np.float32)


def customizing_fit_compute_loss(tf, keras, epochs=3):

    class CustomModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)  # Forward pass
                loss = self.compute_loss(y=y, y_pred=y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)  # Keras 3's spelling of apply_gradients
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name != "loss":
                    metric.update_state(y, y_pred)
                else:
                    metric.update_state(loss)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    initial_weights(model, 7)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    x, y = regression_data()
    history = model.fit(x, y, epochs=epochs, shuffle=False, verbose=0)
    evaluation = model.evaluate(x, y, verbose=0)
    return {"history": {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())},
            "evaluate": [float(v) for v in evaluation], "metrics_names": [m.name for m in model.metrics]}


def customizing_fit_own_metrics(tf, keras, epochs=3):

    class CustomModel(keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = keras.metrics.Mean(name="loss")
            self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)  # Forward pass
                loss = keras.losses.mean_squared_error(y, y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply_gradients(zip(gradients, trainable_vars))
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    initial_weights(model, 8)
    model.compile(optimizer="adam")
    x, y = regression_data()
    history = model.fit(x, y, epochs=epochs, shuffle=False, verbose=0)
    return {"history": {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())}}


TUTORIALS = [custom_training_walkthrough, basic_training_loop_module, basic_training_loop_keras,
             training_loop_from_scratch, customizing_fit_compute_loss, customizing_fit_own_metrics]


def training_loop_with_added_losses(tf, keras, epochs=1):
    """"Writing a training loop from scratch", its last part: a layer's `add_loss`, read from
    `model.losses` in the loop (and by `fit`)."""

    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs

    def build():
        inputs = keras.Input(shape=(784,), name="digits")
        x = keras.layers.Dense(64, activation="relu")(inputs)
        x = ActivityRegularizationLayer()(x)  # Insert activity regularization as a layer
        x = keras.layers.Dense(64, activation="relu")(x)
        outputs = keras.layers.Dense(10, name="predictions")(x)
        model = keras.Model(inputs=inputs, outputs=outputs)
        initial_weights(model, 9, scale=0.05)
        return model

    model = build()
    optimizer = keras.optimizers.SGD(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x_train, y_train = digits(4, 128)

    @function(tf)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
            # Add any extra losses created during the forward pass.
            loss_value += sum(model.losses)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        return loss_value

    record = {"step_losses": [float(train_step(x, y)) for x, y in batches(tf, x_train, y_train, 64)],
              "losses_after_call": len(model.losses)}
    fitted = build()
    fitted.compile(optimizer=keras.optimizers.SGD(learning_rate=1e-3), loss=loss_fn)
    record["fit_loss"] = fitted.fit(x_train, y_train, batch_size=64, epochs=2, shuffle=False,
                                    verbose=0).history["loss"]
    return record


def fit_with_sample_weights_and_validation(tf, keras, epochs=3):
    """compile/fit/evaluate/predict as a script uses them: sample weights (metrics= unweighted,
    weighted_metrics= weighted), validation_split, momentum, evaluate's dict, predict."""
    inputs = keras.Input(shape=(4,))
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3)(hidden))
    initial_weights(model, 10)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy", keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name="xent")],
                  weighted_metrics=["accuracy"])
    x, y = penguins(seed=3, n=100)
    sample_weight = np.random.default_rng(12).uniform(0.2, 2.0, 100).astype(np.float32)
    history = model.fit(x, y, sample_weight=sample_weight, batch_size=16, epochs=epochs, validation_split=0.2,
                        shuffle=False, verbose=0)
    evaluation = model.evaluate(x, y, sample_weight=sample_weight, batch_size=32, verbose=0, return_dict=True)
    listed = model.evaluate(x, y, batch_size=32, verbose=0)
    return {"history": {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())},
            "evaluate": {k: float(v) for k, v in sorted(evaluation.items())}, "evaluate_list": listed,
            "predict": np.asarray(model.predict(x[:4], verbose=0)).ravel().tolist()}


def fit_with_learning_rate_callbacks(tf, keras, epochs=6):
    """LearningRateScheduler and ReduceLROnPlateau change the optimizer's rate between epochs."""
    results = {}
    for name in ("scheduler", "plateau"):
        inputs = keras.Input(shape=(4,))
        model = keras.Model(inputs, keras.layers.Dense(3)(keras.layers.Dense(8, activation="tanh")(inputs)))
        initial_weights(model, 13)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.05),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        if name == "scheduler":
            callback = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * 0.5)
        else:
            callback = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=0.15,
                                                         cooldown=1, min_lr=0.01)
        x, y = penguins(seed=4, n=64)
        history = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=False, verbose=0, callbacks=[callback])
        results[name] = {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())}
    return results


def fit_with_regularizers(tf, keras, epochs=2):
    """Weight and activity regularizers: their penalties join the loss `fit` minimises and reports."""
    regularizers = keras.regularizers
    model = keras.Sequential([
        keras.Input(shape=(4,)),
        keras.layers.Dense(8, activation="relu", kernel_regularizer=regularizers.l2(0.01),
                           bias_regularizer=regularizers.L1(0.001), activity_regularizer=regularizers.l1(0.001)),
        keras.layers.Dense(3, kernel_regularizer=regularizers.L1L2(l1=0.001, l2=0.002)),
    ])
    initial_weights(model, 14)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = penguins(seed=6, n=64)
    history = model.fit(x, y, batch_size=16, epochs=epochs, shuffle=False, verbose=0)
    model(x[:8])
    return {"loss": [float(v) for v in history.history["loss"]], "losses": [float(v) for v in model.losses]}


def basic_classification(tf, keras, epochs=3):
    """"Basic classification" (Fashion MNIST): Flatten, Dense 128 relu, Dense 10; Adam, sparse
    cross entropy from logits, accuracy; evaluate; a probability model ending in Softmax."""
    rng = np.random.default_rng(15)
    train_images = rng.integers(0, 256, (96, 28, 28)).astype(np.uint8) / 255.0
    train_labels = rng.integers(0, 10, 96)
    test_images, test_labels = train_images[:32], train_labels[:32]
    model = keras.Sequential([
        keras.layers.Flatten(input_shape=(28, 28)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10),
    ])
    initial_weights(model, 16, scale=0.05)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(train_images, train_labels, epochs=epochs, shuffle=False, verbose=0)
    test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=0)
    probability_model = keras.Sequential([model, keras.layers.Softmax()])
    predictions = probability_model.predict(test_images, verbose=0)
    return {"history": {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())},
            "test": [float(test_loss), float(test_acc)], "predictions": predictions[:2].ravel().tolist(),
            "argmax": np.argmax(predictions, axis=1).tolist()}


def basic_regression(tf, keras, epochs=5):
    """"Basic regression" (fuel efficiency): a Normalization layer adapted to the features,
    Dense 64 relu twice, Dense 1; Adam(0.001), mean absolute error, validation_split=0.2."""
    rng = np.random.default_rng(17)
    train_features = (rng.standard_normal((120, 9)) * rng.uniform(0.5, 50, 9) + rng.uniform(-10, 100, 9))
    train_labels = train_features @ rng.standard_normal(9) * 0.05 + 20.0
    normalizer = keras.layers.Normalization(axis=-1)
    normalizer.adapt(np.array(train_features))
    model = keras.Sequential([
        normalizer,
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.build((None, 9))
    rng = np.random.default_rng(18)
    model.set_weights([w if i < 3 else (0.1 * rng.standard_normal(w.shape)).astype(np.float32)
                       for i, w in enumerate(model.get_weights())])
    model.compile(loss="mean_absolute_error", optimizer=keras.optimizers.Adam(0.001))
    history = model.fit(train_features, train_labels, validation_split=0.2, epochs=epochs, shuffle=False, verbose=0)
    return {"history": {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())},
            "evaluate": float(model.evaluate(train_features[:40], train_labels[:40], verbose=0)),
            "predict": model.predict(train_features[:3], verbose=0).ravel().tolist(),
            "mean": np.asarray(normalizer.mean).ravel().tolist()}


def convolutional_network(tf, keras, epochs=2):
    """"Convolutional Neural Network" (CIFAR-10): three Conv2D and two MaxPooling2D, Flatten,
    Dense 64, Dense 10; Adam, sparse cross entropy from logits, validation_data."""
    rng = np.random.default_rng(19)
    train_images = rng.integers(0, 256, (48, 32, 32, 3)).astype(np.uint8) / 255.0
    train_labels = rng.integers(0, 10, (48, 1))
    test_images, test_labels = train_images[:16], train_labels[:16]
    keras.backend.clear_session()  # the summary's layer names start afresh
    model = keras.models.Sequential()
    model.add(keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(32, 32, 3)))
    model.add(keras.layers.MaxPooling2D((2, 2)))
    model.add(keras.layers.Conv2D(64, (3, 3), activation="relu"))
    model.add(keras.layers.MaxPooling2D((2, 2)))
    model.add(keras.layers.Conv2D(64, (3, 3), activation="relu"))
    model.add(keras.layers.Flatten())
    model.add(keras.layers.Dense(64, activation="relu"))
    model.add(keras.layers.Dense(10))
    initial_weights(model, 20, scale=0.1)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(train_images, train_labels, epochs=epochs, batch_size=16, shuffle=False,
                        validation_data=(test_images, test_labels), verbose=0)
    printed = []
    model.summary(print_fn=lambda text, **kwargs: printed.append(text))
    return {"history": {k: [float(v) for v in vs] for k, vs in sorted(history.history.items())},
            "summary_rows": [line for line in "\n".join(printed).splitlines() if line.startswith("│")]}


TUTORIALS += [convolutional_network, training_loop_with_added_losses, fit_with_sample_weights_and_validation,
              fit_with_learning_rate_callbacks, fit_with_regularizers, basic_classification, basic_regression]
