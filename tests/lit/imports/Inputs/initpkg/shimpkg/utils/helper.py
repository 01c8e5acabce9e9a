# Host code choosing a math module by backend, FlagGems' triton_lang_helper.py's shape: the call
# is host Python; the except clause's dotted name is what tric reads.
from shimpkg.runtime import backend

device = backend.DeviceDetector()
try:
    tl_extra_shim = backend.get_tl_extra_backend_module(device.vendor_name)
except ImportError:
    import triton

    try:
        tl_extra_shim = triton.language.math
    except ImportError:
        tl_extra_shim = triton.language.libdevice
