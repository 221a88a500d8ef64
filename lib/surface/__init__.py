"""The TensorFlow-style surface: `Variable`, operators, TF-named functions, `Module`,
`tf.function` and the control flow (`while_loop`, `cond`, `scan`), and the
`math`/`nn`/`linalg`/`image`/`random`/`signal`/`autodiff`/`data`/`config` namespaces (`import dualtape as tf`)."""
