"""A TF 2 training script, written once for `tf` = TensorFlow or dualtape (issue 24's "runs
unchanged"): shared by tests/test_tf_training_script.py and, to record TF's losses, run as

    /tmp/tfenv/bin/python tests/tf_training_script.py

No randomness: data and initial weights are formulas, and the dataset is not shuffled.
"""

import numpy as np


def wave(shape, phase, scale):
    n = int(np.prod(shape))
    return (scale * np.sin(np.arange(n) * 0.37 + phase)).astype(np.float32).reshape(shape)


def run(tf, epochs=3):
    """Per-step losses and the final global gradient norms of a small CNN trained with
    tf.data, tf.function, GradientTape, tf.nn ops and Nadam with global-norm clipping."""
    images = wave((24, 9, 9, 2), 0.0, 1.0)
    labels = (np.arange(24) % 3).astype(np.int32)
    data = tf.data.Dataset.from_tensor_slices((images, labels)).batch(8).prefetch(tf.data.AUTOTUNE)

    kernel = tf.Variable(wave((3, 3, 2, 4), 1.0, 0.3))
    bias = tf.Variable(np.zeros(4, np.float32))
    dense = tf.Variable(wave((3 * 3 * 4, 3), 2.0, 0.2))
    variables = [kernel, bias, dense]
    opt = tf.keras.optimizers.Nadam(learning_rate=0.02)

    def model(x):
        h = tf.nn.bias_add(tf.nn.conv2d(x, kernel, strides=2, padding="SAME"), bias)
        mean, variance = tf.nn.moments(h, axes=[0, 1, 2], keepdims=True)
        h = tf.nn.gelu((h - mean) / tf.sqrt(variance + 1e-3))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="SAME")
        return tf.reshape(h, [-1, 3 * 3 * 4]) @ dense

    @tf.function(input_signature=[tf.TensorSpec([None, 9, 9, 2], tf.float32), tf.TensorSpec([None], tf.int32)])
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=model(x)))
        grads, norm = tf.clip_by_global_norm(tape.gradient(loss, variables), 1.0)
        opt.apply_gradients(zip(grads, variables))
        return loss, norm

    losses, norms = [], []
    for _ in range(epochs):
        for x, y in data:
            loss, norm = train_step(x, y)
            losses.append(float(loss))
            norms.append(float(norm))
    return losses, norms


if __name__ == "__main__":
    import tensorflow

    losses, norms = run(tensorflow)
    print(f"# TensorFlow {tensorflow.__version__}")
    print("LOSSES =", [float(np.float32(v)) for v in losses])
    print("NORMS =", [float(np.float32(v)) for v in norms])
