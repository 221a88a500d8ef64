"""`tf.config`: the device and execution settings a TF script sets up front, answered for
dualtape, which runs eagerly on the CPU with NumPy: one CPU device, no GPU; memory growth,
visible devices and thread counts are accepted and change nothing."""

import collections as _collections

__all__ = ["PhysicalDevice", "LogicalDevice", "run_functions_eagerly", "functions_run_eagerly",
           "list_physical_devices", "list_logical_devices", "get_visible_devices", "set_visible_devices",
           "experimental", "threading"]

PhysicalDevice = _collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = _collections.namedtuple("LogicalDevice", ["name", "device_type"])

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")


def run_functions_eagerly(run_eagerly):
    """Accepted: tf.function always runs eagerly in dualtape."""


def functions_run_eagerly():
    """True: tf.function always runs eagerly in dualtape."""
    return True


def list_physical_devices(device_type=None):
    """[the CPU] for None or 'CPU'; [] for 'GPU', 'TPU' and others (NumPy runs on the CPU)."""
    return [_CPU] if device_type is None or str(device_type).upper() == "CPU" else []


def list_logical_devices(device_type=None):
    return [LogicalDevice("/device:CPU:0", "CPU") for _ in list_physical_devices(device_type)]


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Accepted; the CPU stays the one device."""


class _Experimental:
    """`tf.config.experimental`: memory growth is accepted (there is no GPU memory to grow)."""

    @staticmethod
    def set_memory_growth(device, enable):
        pass

    @staticmethod
    def get_memory_growth(device):
        return False

    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)


class _Threading:
    """`tf.config.threading`: thread counts are accepted; NumPy's BLAS has its own setting
    (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS in the environment)."""

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads):
        pass

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads):
        pass

    @staticmethod
    def get_intra_op_parallelism_threads():
        return 0  # TF's "the system picks"

    @staticmethod
    def get_inter_op_parallelism_threads():
        return 0


experimental = _Experimental()
threading = _Threading()
