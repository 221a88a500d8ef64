"""Issue 24's promise, end to end: the TF 2 training script of tf_training_script.py (tf.data,
tf.function with an input_signature, GradientTape, conv2d / bias_add / moments / gelu /
max_pool2d / sparse softmax cross entropy, clip_by_global_norm, Nadam) runs unchanged with
`import dualtape as tf`, and takes TF's steps: each loss and gradient norm within a few float32
roundings of TensorFlow 2.21's (recorded below by running the same file with TF)."""

import numpy as np

import dualtape as tf
from tf_training_script import run

# TensorFlow 2.21.0
LOSSES = [1.0869008302688599, 1.3042535781860352, 1.1595203876495361, 1.1062649488449097, 1.1545274257659912,
          1.122459053993225, 1.1226874589920044, 1.133130431175232, 1.1130189895629883]
NORMS = [1.4023905992507935, 1.6651175022125244, 0.70755535364151, 0.6775026321411133, 0.8862057328224182,
         0.6229457259178162, 0.7936959862709045, 0.7312700748443604, 0.6064836978912354]


def test_the_script_takes_tfs_steps():
    losses, norms = run(tf)
    # the sums inside conv2d, moments and the norms add in another order than TF's: a few
    # float32 roundings per step, carried through 9 optimizer steps
    rtol = 8 * np.finfo(np.float32).eps
    np.testing.assert_allclose(losses, LOSSES, rtol=rtol)
    np.testing.assert_allclose(norms, NORMS, rtol=rtol)
