"""tf.config (issue 24): the device and execution settings a TF script sets up front run
unchanged: one CPU device, no GPU (TF 2.21 on a CPU-only machine answers the same), and the
settings are accepted."""

import dualtape as tf


def test_devices_as_a_cpu_only_tf():
    assert tf.config.list_physical_devices("GPU") == []
    cpu = tf.config.list_physical_devices("CPU")
    assert repr(cpu) == "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"  # TF 2.21's repr
    assert tf.config.list_physical_devices() == cpu and len(tf.config.list_logical_devices("CPU")) == 1
    for gpu in tf.config.list_physical_devices("GPU"):  # the usual set-up loop runs (zero times)
        tf.config.experimental.set_memory_growth(gpu, True)
    tf.config.set_visible_devices([], "GPU")
    tf.config.threading.set_intra_op_parallelism_threads(1)
    assert tf.config.threading.get_intra_op_parallelism_threads() == 0


def test_functions_always_run_eagerly():
    tf.config.run_functions_eagerly(False)  # accepted; tf.function runs eagerly anyway
    assert tf.config.functions_run_eagerly() is True
