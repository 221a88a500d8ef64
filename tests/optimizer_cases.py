"""The optimizer cases of tests/test_optimizers.py, shared with keras_reference_recorder.py.

Each case: an optimizer class name and its keyword arguments, run for STEPS steps on two
variables w (3,) and b (2, 2) fed the fixed gradients GW, GB.
"""

import numpy as np

STEPS = 4

# The gradients of w (3,) and b (2, 2) at each step (drawn once from
# np.random.default_rng(14).uniform(-2, 2) and rounded to sixteenths).
GW = [[1.3125, -0.5625, 0.8125], [1.4375, 0.5625, 0.1875], [1.0625, 0.875, -0.125], [0.3125, 1.0, -1.75]]
GB = [[[0.5625, 0.9375], [-0.375, 0.0]], [[-1.0625, 0.625], [1.875, -0.8125]],
      [[-0.125, 1.5625], [0.1875, -0.3125]], [[0.6875, -1.875], [-1.375, 1.5]]]


def fixed_grads(dtype):
    return np.array(GW, dtype), np.array(GB, dtype)


W0 = [0.5, -1.25, 2.0]
B0 = [[0.1, -0.2], [0.3, 0.4]]

CASES = {
    "sgd": ("SGD", dict(learning_rate=0.1)),
    "sgd_momentum": ("SGD", dict(learning_rate=0.1, momentum=0.9)),
    "sgd_nesterov": ("SGD", dict(learning_rate=0.1, momentum=0.9, nesterov=True)),
    "sgd_weight_decay": ("SGD", dict(learning_rate=0.1, weight_decay=0.05)),
    "sgd_clipvalue": ("SGD", dict(learning_rate=0.1, clipvalue=0.3)),
    "sgd_clipnorm": ("SGD", dict(learning_rate=0.1, clipnorm=0.5)),
    "sgd_global_clipnorm": ("SGD", dict(learning_rate=0.1, global_clipnorm=1.0)),
    "adam": ("Adam", dict(learning_rate=0.1)),
    "adam_amsgrad": ("Adam", dict(learning_rate=0.1, beta_1=0.8, beta_2=0.9, amsgrad=True)),
    "adam_clipnorm": ("Adam", dict(learning_rate=0.1, clipnorm=0.5)),
    "adamw": ("AdamW", dict(learning_rate=0.1, weight_decay=0.1)),
    "adamw_default": ("AdamW", dict()),
    "rmsprop": ("RMSprop", dict(learning_rate=0.1)),
    "rmsprop_momentum": ("RMSprop", dict(learning_rate=0.1, rho=0.8, momentum=0.5)),
    "rmsprop_centered": ("RMSprop", dict(learning_rate=0.1, centered=True)),
    "rmsprop_centered_momentum": ("RMSprop", dict(learning_rate=0.05, rho=0.7, momentum=0.9,
                                                  epsilon=1e-3, centered=True)),
    "adagrad": ("Adagrad", dict(learning_rate=0.1)),
    "adagrad_options": ("Adagrad", dict(learning_rate=0.5, initial_accumulator_value=0.5,
                                        epsilon=1e-2, weight_decay=0.01)),
    "nadam": ("Nadam", dict(learning_rate=0.1)),
    "nadam_options": ("Nadam", dict(learning_rate=0.05, beta_1=0.8, beta_2=0.9, epsilon=1e-3, clipvalue=1.0)),
    "adamax": ("Adamax", dict(learning_rate=0.1)),
    "adamax_weight_decay": ("Adamax", dict(learning_rate=0.1, beta_1=0.7, beta_2=0.8, weight_decay=0.05)),
    "lion": ("Lion", dict(learning_rate=0.1)),
    "lion_options": ("Lion", dict(learning_rate=0.05, beta_1=0.5, beta_2=0.8, weight_decay=0.1)),
}

SCHEDULES = {
    "exponential": ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5)),
    "exponential_staircase": ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=2,
                                                       decay_rate=0.5, staircase=True)),
    "piecewise": ("PiecewiseConstantDecay", dict(boundaries=[1, 3], values=[0.1, 0.05, 0.01])),
    "cosine": ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=3, alpha=0.1)),
    "cosine_warmup": ("CosineDecay", dict(initial_learning_rate=0.0, decay_steps=3,
                                          warmup_target=0.1, warmup_steps=2)),
    "inverse_time": ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=1, decay_rate=0.5)),
    "inverse_time_staircase": ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2,
                                                        decay_rate=0.5, staircase=True)),
    "polynomial": ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=3,
                                           end_learning_rate=0.01, power=2.0)),
    "polynomial_cycle": ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=2,
                                                 end_learning_rate=0.01, power=0.5, cycle=True)),
}

# Cases also recorded with float64 variables, and the ones where b has no gradient at step 2.
FLOAT64 = ["sgd_nesterov", "adam", "adamw", "rmsprop_centered_momentum", "adagrad", "nadam", "adamax", "lion"]
NONE_GRAD = ["sgd_momentum", "adam", "adamw", "rmsprop_centered_momentum", "nadam", "adamax", "lion"]
SCHEDULED_FLOAT64 = ["cosine_warmup", "polynomial"]
