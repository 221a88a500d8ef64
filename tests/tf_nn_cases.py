"""The tf.nn cases of tests/test_tf_nn_core.py, shared with tf_nn_reference_recorder.py.

Each case: a tf.nn function name, a builder of its float32 inputs (deterministic formulas,
no RNG, so TF and dualtape see the same numbers), the indices of the inputs to
differentiate, and keyword arguments. The references are the output and the gradient of
sum(output * cotangent(output)) with respect to each differentiated input.
"""

import numpy as np


def wave(shape, phase=0.0, scale=2.0):
    n = int(np.prod(shape))
    return (scale * np.sin(np.arange(n) * 0.7 + phase)).astype(np.float32).reshape(shape)


def cotangent(shape):
    n = int(np.prod(shape))
    return np.cos(np.arange(n) * 1.3).astype(np.float32).reshape(shape)


TIES = np.array([[1, 3, 3, 0], [3, 2, 1, 3], [0, 3, 3, 1], [2, 1, 0, 2]], np.float32).reshape(1, 4, 4, 1)
VECTOR = np.array([-30.0, -4.0, -1.5, -0.5, 0.0, 0.25, 1.0, 2.5, 30.0], np.float32)

CASES = {
    "conv_same_s2_odd": ("conv2d", lambda: (wave((1, 5, 5, 2)), wave((3, 3, 2, 2), 1.0)), (0, 1),
                         dict(strides=2, padding="SAME")),
    "conv_same_s2_even": ("conv2d", lambda: (wave((1, 6, 6, 2)), wave((3, 3, 2, 3), 2.0)), (0, 1),
                          dict(strides=[1, 2, 2, 1], padding="SAME")),
    "conv_valid_dilated": ("conv2d", lambda: (wave((1, 6, 5, 2)), wave((2, 2, 2, 2), 3.0)), (0, 1),
                           dict(strides=1, padding="VALID", dilations=2)),
    "conv_same_dilated": ("conv2d", lambda: (wave((1, 5, 6, 1)), wave((2, 3, 1, 2), 0.5)), (0, 1),
                          dict(strides=1, padding="SAME", dilations=[1, 2, 2, 1])),
    "conv_valid_s3_leftover": ("conv2d", lambda: (wave((2, 7, 6, 1)), wave((3, 3, 1, 2), 4.0)), (0, 1),
                               dict(strides=[1, 3, 2, 1], padding="VALID")),
    "conv_explicit_padding": ("conv2d", lambda: (wave((1, 4, 4, 1)), wave((2, 3, 1, 1), 5.0)), (0, 1),
                              dict(strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]])),
    "max_same_k3_s2": ("max_pool2d", lambda: (wave((1, 5, 5, 2)),), (0,), dict(ksize=3, strides=2, padding="SAME")),
    "max_same_k2_s2": ("max_pool2d", lambda: (wave((1, 6, 5, 1)),), (0,), dict(ksize=2, strides=2, padding="SAME")),
    "max_ties_valid_k3_s1": ("max_pool2d", lambda: (TIES,), (0,), dict(ksize=3, strides=1, padding="VALID")),
    "max_ties_same_k2_s1": ("max_pool2d", lambda: (TIES,), (0,), dict(ksize=2, strides=1, padding="SAME")),
    "max_ties_valid_k2_s2": ("max_pool2d", lambda: (TIES,), (0,), dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                                                         padding="VALID")),
    "avg_same_k3_s2": ("avg_pool2d", lambda: (wave((1, 5, 5, 2)),), (0,), dict(ksize=3, strides=2, padding="SAME")),
    "avg_valid_k2_s2": ("avg_pool2d", lambda: (wave((2, 5, 4, 1)),), (0,), dict(ksize=2, strides=2, padding="VALID")),
    "avg_same_k2x3_s1": ("avg_pool2d", lambda: (wave((1, 4, 5, 1)),), (0,), dict(ksize=[2, 3], strides=1,
                                                                                  padding="SAME")),
    "sparse_xent": ("sparse_softmax_cross_entropy_with_logits",
                    lambda: (np.array([0, 2, 1], np.int32), wave((3, 3))), (1,), {}),
    "gelu": ("gelu", lambda: (VECTOR,), (0,), {}),
    "gelu_approximate": ("gelu", lambda: (VECTOR,), (0,), dict(approximate=True)),
    "leaky_relu": ("leaky_relu", lambda: (VECTOR,), (0,), {}),
    "leaky_relu_alpha": ("leaky_relu", lambda: (VECTOR,), (0,), dict(alpha=0.05)),
    "selu": ("selu", lambda: (VECTOR,), (0,), {}),
    "elu": ("elu", lambda: (VECTOR,), (0,), {}),
    "relu": ("relu", lambda: (VECTOR,), (0,), {}),
    "softplus": ("softplus", lambda: (VECTOR,), (0,), {}),
    "sigmoid": ("sigmoid", lambda: (VECTOR,), (0,), {}),
    "tanh": ("tanh", lambda: (VECTOR,), (0,), {}),
    "silu": ("silu", lambda: (VECTOR,), (0,), {}),
    "softmax": ("softmax", lambda: (wave((2, 4)),), (0,), {}),
    "log_softmax": ("log_softmax", lambda: (wave((2, 4)),), (0,), {}),
    "l2_loss": ("l2_loss", lambda: (wave((2, 3)),), (0,), {}),
    "bias_add": ("bias_add", lambda: (wave((2, 2, 3)), wave((3,), 1.0)), (0, 1), {}),
    "sigmoid_xent": ("sigmoid_cross_entropy_with_logits", lambda: (wave((2, 3), 1.0, 0.5) + 0.5, wave((2, 3))),
                     (0, 1), {}),
    "moments_mean": ("moments", lambda: (wave((2, 3, 4)),), (0,), dict(axes=[0, 2], output=0)),
    "moments_variance": ("moments", lambda: (wave((2, 3, 4)),), (0,), dict(axes=[0, 2], output=1)),
    "moments_variance_keepdims": ("moments", lambda: (wave((2, 3, 4)),), (0,),
                                  dict(axes=[1], keepdims=True, output=1)),
}


def call(nn, name, args, kwargs):
    """nn.<name>(*args, **kwargs); `output=` picks one of several outputs (moments)."""
    kwargs = dict(kwargs)
    output = kwargs.pop("output", None)
    if name in ("sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits"):
        result = getattr(nn, name)(labels=args[0], logits=args[1], **kwargs)
    else:
        result = getattr(nn, name)(*args, **kwargs)
    return result if output is None else result[output]
