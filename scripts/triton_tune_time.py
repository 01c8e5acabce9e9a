# Triton's autotuner on seed 2 as the seed writes it (16 configs, key M, N, K), timed the way
# bench/bench_autotune.c times tric's: the first call (compiling every config into an empty cache,
# then do_bench on each, then the launch) and a second call, both synchronized, at M = N = K =
# SIZE (default 4096), fp16, GROUP_SIZE_M 8. The kernel and its configs are
# scripts/triton_seed2_report.py's (the seed's, as written). Run on the GPU machine:
#   python3 scripts/triton_tune_time.py [SIZE]
import os
import sys
import tempfile
import time

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tcache")  # cold: set before the import
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from triton_seed2_report import triton_matmul, tuned_kernel  # noqa: E402

size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
torch.manual_seed(3407)
a = torch.rand((size, size), device="cuda", dtype=torch.float16)
b = torch.rand((size, size), device="cuda", dtype=torch.float16)
c = torch.empty((size, size), device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
times = []
for _ in range(2):
    t0 = time.perf_counter()
    triton_matmul(a, b, c, 8)
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
err = (c.float() - (a.float() @ b.float())).abs().max().item()
print(f"triton {triton.__version__}: seed 2 autotuned, M=N=K={size}, 16 configs, cold cache")
print(f"first call (compile + tune + launch): {times[0] * 1e3:.1f} ms")
print(f"second call: {times[1] * 1e3:.3f} ms")
print(f"chosen: {tuned_kernel(8).best_config}")
print(f"max abs error against torch: {err:.3g}")
