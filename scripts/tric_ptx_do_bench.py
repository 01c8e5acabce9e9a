#!/usr/bin/env python3
# scripts/tric_ptx_do_bench.py SIZES PTX... : seed 2's kernel_matmul or seed 1's matmul_kernel
# (fp32 C) as tric compiled it (each PTX file a config: `tric examples/matmul.tri
# --kernel=kernel_matmul ... -o NAME_s<STAGES>.ptx`; its header gives the kernel, the tile, the
# threads and the shared memory) beside Triton's kernel of the same seed and config, BOTH timed by triton.testing.do_bench in this one process: tric's PTX is loaded
# and launched through the CUDA driver API (ctypes, on torch's current stream), so the two sides
# share the harness, the L2 flush, the warm-up and repetition counts and the events, and differ
# only in the kernel. Four rounds per config and size, tric first in rounds 1 and 3, Triton first
# in 2 and 4; [0, 1) data (the seed's torch.rand); every output is checked against torch.matmul
# first. Prints one line per side and round: size, config, ms, TFLOPS.
# Runs on the GPU machine (torch + Triton); elsewhere `python3 -m py_compile` checks it.
import ctypes
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tri_module import load_tri  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402
from triton_seed2_report import seed2_launcher  # noqa: E402


# seed 1's kernel from the very file tric compiles
matmul_kernel = load_tri("matmul").matmul_kernel


def seed1_launcher(a, b, c, size, bm, bn, bk, warps, stages):
    grid = (triton.cdiv(size, bm) * triton.cdiv(size, bn),)

    def run():
        matmul_kernel[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                            b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=bm,
                            BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, num_warps=warps, num_stages=stages)
    return run

class TricKernel(TricPtx):
    """One tric PTX file of seed 1 or seed 2, loaded into torch's context."""

    def __init__(self, cuda, path):
        super().__init__(cuda, path)
        self.bm, self.bn, self.bk = (int(self.consts["BLOCK_SIZE_" + x]) for x in "MNK")
        # the header has no stage count: the file name ends in _s<N>.ptx (Triton's num_stages)
        stages = re.search(r"_s(\d+)\.ptx$", path)
        if not stages:
            sys.exit("%s: name the file ..._s<num_stages>.ptx" % path)
        self.stages = int(stages.group(1))
        self.name = os.path.basename(path)
        self.seed1 = self.kernel == "matmul_kernel"
        self.c_fp32 = self.params[2].startswith("*fp32")  # C's dtype

    def launcher(self, a, b, c, size):
        grid = (triton.cdiv(size, self.bm) * triton.cdiv(size, self.bn),)
        return super().launcher(grid, [a, b, c, size, size, size, a.stride(0), a.stride(1),
                                       b.stride(0), b.stride(1), c.stride(0), c.stride(1)])


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: tric_ptx_do_bench.py SIZES PTX...")
    sizes = [int(x) for x in argv[1].split(",")]
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context is current from here on
    cuda = ctypes.CDLL("libcuda.so.1")
    kernels = [TricKernel(cuda, p) for p in argv[2:]]
    print("# triton %s, torch %s, %s" % (triton.__version__, torch.__version__,
                                         torch.cuda.get_device_name()))
    for size in sizes:
        a, b = (torch.rand(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
        ref = torch.matmul(a, b)
        ref32 = torch.matmul(a.float(), b.float())
        for k in kernels:
            warps, stages = k.threads // 32, k.stages
            c = torch.empty(size, size, device="cuda",
                            dtype=torch.float32 if k.c_fp32 else torch.float16)
            # fp32 C is checked against an fp32 product (ref's fp16 rounding alone reaches 1
            # at 8192)
            want = ref32 if k.c_fp32 else ref
            launcher = seed1_launcher if k.seed1 else seed2_launcher
            triton_run = launcher(a, b, c, size, k.bm, k.bn, k.bk, warps, stages)
            sides = (("tric", k.launcher(a, b, c, size)), ("triton", triton_run))
            for name, run in sides:
                c.fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                err = (c.float() - want.float()).abs().max().item()
                if not err <= 1e-2 * size ** 0.5:
                    sys.exit("%s %d %dx%dx%d: max error %g" % (name, size, k.bm, k.bn, k.bk, err))
            for rnd in (1, 2, 3, 4):
                # the order alternates: under the power limit the side that runs second inherits
                # the heat of the first
                for name, run in (sides if rnd % 2 else sides[::-1]):
                    ms = triton.testing.do_bench(run, warmup=25, rep=100, return_mode="median")
                    print("%d %-18s %-6s %-24s round %d %.4f ms %.1f TFLOPS" % (
                        size, "%dx%dx%d,%d,%d" % (k.bm, k.bn, k.bk, warps, stages), name,
                        k.name if name == "tric" else ("seed1" if k.seed1 else "seed2") +
                        (" fp32 C" if k.c_fp32 else ""), rnd, ms,
                        2 * size ** 3 / ms * 1e-9), flush=True)


if __name__ == "__main__":
    main(sys.argv)
