"""The TensorFlow-style surface: `Variable`, operators, TF-named functions, `Module`, `layers`
and the `math`/`nn`/`linalg`/`image`/`random`/`autodiff` namespaces (`import dualtape as tf`)."""
