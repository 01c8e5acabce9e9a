# scripts/bench_fp32_matmul_ptx.py SIZE PTX... : tric PTX files of examples/matmul.tri's fp32
# kernels (seed 1's matmul_kernel or seed 2's kernel_matmul, BLOCK 64x64, the corpus signature
# "*fp32:16,*fp32:16,*fp32:16,<ints>" with stride_ak, stride_bn, stride_cn 1), run ON the GPU
# machine: each checked against torch in double, then timed by triton.testing.do_bench (the best
# of three medians) at M = N = K = SIZE; the ratio of each file's time to the first's. How the
# FMA dot's pipelining was measured (docs/passes.md "FMA dots"): the PTX of
# scripts/ptx_corpus.sh's lit_matmul_1 and lit_matmul_4 before and after.
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: bench_fp32_matmul_ptx.py SIZE PTX...")
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.cuda.init()
    n = int(argv[1])
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    ref = a.double() @ b.double()
    grid = ((n + 63) // 64 * ((n + 63) // 64),)
    first = None
    for path in argv[2:]:
        k = TricPtx(cuda, path)
        c = torch.full((n, n), float("nan"), device="cuda")
        run = k.launcher(grid, [a, b, c, n, n, n, n, 1, n, 1, n, 1])
        run()
        torch.cuda.synchronize()
        err = (c.double() - ref).abs().max().item()
        ms = min(triton.testing.do_bench(run) for _ in range(3))
        first = first or ms
        print("%s %s n=%d: max |C - torch| %.3g, %.4f ms, %.1f TFLOPS, time / first %.3f"
              % (k.kernel, path, n, err, ms, 2 * n ** 3 / ms / 1e9, ms / first))


if __name__ == "__main__":
    main(sys.argv)
