# scripts/bench_fp32_matmul_ptx.py SIZE PTX... : tric PTX files of examples/matmul.tri's matmul
# kernels (seed 1's matmul_kernel or seed 2's kernel_matmul, fp32 or fp16 inputs, any BLOCK_SIZE_M
# and _N, stride_ak, stride_bn, stride_cn 1; the element types and blocks are read from each
# file's tric metadata), run ON the GPU machine: each checked against torch in double, then timed
# by triton.testing.do_bench (the best of three medians) at M = N = K = SIZE; the ratio of each
# file's time to the first's. How the FMA dot's pipelining was measured (docs/passes.md "FMA
# dots"): the PTX of scripts/ptx_corpus.sh's lit_matmul_1 and lit_matmul_4 before and after.
# --check: check only, no timing (for compute-sanitizer). --torch: time torch.matmul (cuBLAS) on
# the first file's inputs too, and print each file's time / cuBLAS's.
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
    torch.zeros(1, device="cuda")  # the primary context, current before the modules load
    check_only, with_torch = "--check" in argv, "--torch" in argv
    argv = [a for a in argv if a not in ("--check", "--torch")]
    cublas = None
    n = int(argv[1])
    dtypes = {"fp32": torch.float32, "fp16": torch.float16}
    inputs, ref, first = {}, {}, None
    for path in argv[2:]:
        k = TricPtx(cuda, path)
        ta, tc = dtypes[k.params[0].split(":")[0][1:]], dtypes[k.params[2].split(":")[0][1:]]
        if ta not in inputs:
            gen = torch.Generator(device="cuda").manual_seed(0)
            a = torch.randn(n, n, device="cuda", generator=gen).to(ta)
            b = torch.randn(n, n, device="cuda", generator=gen).to(ta)
            inputs[ta], ref[ta] = (a, b), a.double() @ b.double()
        a, b = inputs[ta]
        bm, bn = int(k.consts["BLOCK_SIZE_M"]), int(k.consts["BLOCK_SIZE_N"])
        grid = ((n + bm - 1) // bm * ((n + bn - 1) // bn),)
        c = torch.full((n, n), float("nan"), device="cuda", dtype=tc)
        run = k.launcher(grid, [a, b, c, n, n, n, n, 1, n, 1, n, 1])
        run()
        torch.cuda.synchronize()
        err = (c.double() - ref[ta]).abs().max().item()
        if check_only:
            print("%s %s n=%d: max |C - torch| %.3g" % (k.kernel, path, n, err))
            continue
        ms = min(triton.testing.do_bench(run) for _ in range(3))
        first = first or ms
        if with_torch and cublas is None:
            cublas = min(triton.testing.do_bench(lambda: torch.matmul(a, b)) for _ in range(3))
            print("torch.matmul n=%d: %.4f ms, %.1f TFLOPS" % (n, cublas, 2 * n ** 3 / cublas / 1e9))
        print("%s %s n=%d: max |C - torch| %.3g, %.4f ms, %.1f TFLOPS, time / first %.3f%s"
              % (k.kernel, path, n, err, ms, 2 * n ** 3 / ms / 1e9, ms / first,
                 ", time / cuBLAS %.3f" % (ms / cublas) if cublas else ""))


if __name__ == "__main__":
    main(sys.argv)
