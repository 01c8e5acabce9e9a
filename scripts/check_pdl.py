#!/usr/bin/env python3
# scripts/check_pdl.py PTX [N]: Triton's tutorial 11 (programmatic dependent launch) on tric's PTX
# of examples/pdl_add.tri's add_kernel with USE_GDC (gdc_wait before its loads,
# gdc_launch_dependents after them): a chain of CHAIN launches, each adding y to the previous
# one's output (out_i = out_{i-1} + y), launched through the driver API's cuLaunchKernelEx with and
# without CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (each kernel may then start before
# the one it reads has finished, and its griddepcontrol.wait is what orders them). Checks the last
# output against x + CHAIN y both ways, then times the chain both ways (do_bench medians).
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tric_ptx import TricPtx, check  # noqa: E402

CHAIN = 8
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6


class LaunchAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_char * 64)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttr)), ("numAttrs", ctypes.c_uint)]


def main(argv):
    path = argv[1]
    n = int(argv[2]) if len(argv) > 2 else 1 << 24
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context, current for the driver API
    cuda = ctypes.CDLL("libcuda.so.1")
    kernel = TricPtx(cuda, path)  # its module and function, loaded; threads and shared memory
    block = int(kernel.consts["BLOCK_SIZE"])
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    outs = [torch.empty_like(x) for _ in range(CHAIN)]
    attr = LaunchAttr(id=CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
    ctypes.memmove(attr.value, ctypes.byref(ctypes.c_int(1)), 4)
    keep = []

    def chain(pdl):
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        src = x
        for i in range(CHAIN):
            args = [ctypes.c_uint64(src.data_ptr()), ctypes.c_uint64(y.data_ptr()),
                    ctypes.c_uint64(outs[i].data_ptr()), ctypes.c_int32(n)]
            params = (ctypes.c_void_p * 4)(*[ctypes.addressof(a) for a in args])
            cfg = LaunchConfig(triton.cdiv(n, block), 1, 1, kernel.threads, 1, 1, kernel.shared,
                               stream,
                               ctypes.pointer(attr) if pdl and i > 0 else None,
                               1 if pdl and i > 0 else 0)
            check(cuda.cuLaunchKernelEx(ctypes.byref(cfg), kernel.fn, params, None), "launch")
            keep.append((args, params, cfg))
            src = outs[i]

    want = x + CHAIN * y
    for pdl in (False, True):
        for o in outs:
            o.fill_(float("nan"))
        chain(pdl)
        torch.cuda.synchronize()
        d = (outs[-1] - want).abs().max().item()
        print("%s: max |difference| %.3g %s" % ("with PDL" if pdl else "without", d,
                                                 "ok" if d < 1e-4 else "WRONG"), flush=True)
        if not d < 1e-4:
            sys.exit(1)
    t = {pdl: triton.testing.do_bench(lambda: chain(pdl), warmup=25, rep=100,
                                      return_mode="median") for pdl in (False, True)}
    print("chain of %d kernels over %d floats: %.1f us without PDL, %.1f us with (%.3fx)" % (
        CHAIN, n, t[False] * 1e3, t[True] * 1e3, t[False] / t[True]))


if __name__ == "__main__":
    main(sys.argv)
