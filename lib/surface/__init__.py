"""The TensorFlow-style surface: `Variable`, operators, TF-named functions, `Module`
and the `math`/`nn`/`linalg`/`image`/`random`/`signal`/`autodiff` namespaces (`import dualtape as tf`)."""
