# Copied from the project's shared/bench/triton_anchor.py so it travels to the GPU machine with the repo.
# Peer measurements on the GPU machine: Triton (the seeds' kernels) and torch/cuBLAS.
# Run there:  PYTHONUNBUFFERED=1 python3 triton_anchor.py [--quick]
# Prints one table per figure; also writes $OUT/anchors.json when OUT names a folder.
import json, os, sys, time, tempfile, statistics

cache = tempfile.mkdtemp(prefix="tcache")
os.environ["TRITON_CACHE_DIR"] = cache
import torch, triton, triton.language as tl

QUICK = "--quick" in sys.argv
# --matmul-only skips compile, launch and bandwidth figures; --sizes=4096,8192 picks the matmul sizes
MATMUL_ONLY = "--matmul-only" in sys.argv
SIZES = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--sizes=")), None)
dev = "cuda"
props = torch.cuda.get_device_properties(0)
res = {"gpu": props.name, "sms": props.multi_processor_count, "torch": torch.__version__, "triton": triton.__version__}
print(res, flush=True)


# ---- seed 1: vector add ------------------------------------------------------
@triton.jit
def vector_add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def vadd(x, y, out, bs=1024):
    n = x.numel()
    vector_add_kernel[(triton.cdiv(n, bs),)](x, y, out, n, BLOCK_SIZE=bs)


# ---- seed 2: autotuned grouped matmul (configs as in the seed) -----------------
def cfgs():
    C = triton.Config
    return [
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64}, num_stages=3, num_warps=8),
        C({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128}, num_stages=3, num_warps=8),
        C({"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128}, num_stages=3, num_warps=8),
        C({"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64}, num_stages=4, num_warps=8),
    ]


@triton.jit
def mm_body(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
            BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
            GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    if GROUP_SIZE_M == 0:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * sam + offs_k[None, :] * sak)
    b_ptrs = b_ptr + (offs_k[:, None] * sbk + offs_bn[None, :] * sbn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * sak
        b_ptrs += BLOCK_SIZE_K * sbk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


mm_tuned = triton.autotune(configs=cfgs(), key=["M", "N", "K"])(mm_body)


def mm(a, b, kern=mm_tuned, group=8, **kw):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    kern[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
               GROUP_SIZE_M=group, **kw)
    return c


# TRIC_BENCH_REST_MS: the GPU idles that long before each timing, as tric's benchmarks do
# (bench/bench_util.h bench_rest), so neither side is timed right after the other's load.
REST_S = float(os.environ.get("TRIC_BENCH_REST_MS", "0") or 0) / 1000.0


def bench(fn):
    if REST_S > 0:
        torch.cuda.synchronize()
        time.sleep(REST_S)
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


# ---- compile times (cold cache) and launch overhead ----------------------------
if not MATMUL_ONLY:
  x = torch.rand(1 << 20, device=dev); y = torch.rand_like(x); o = torch.empty_like(x)
  torch.cuda.synchronize()
  t0 = time.perf_counter(); vadd(x, y, o); torch.cuda.synchronize(); t_first = time.perf_counter() - t0
  t0 = time.perf_counter(); vadd(x, y, o); torch.cuda.synchronize(); t_second = time.perf_counter() - t0
  res["triton_vadd_cold_compile_s"] = t_first - t_second
  a = torch.randn(512, 512, device=dev, dtype=torch.float16); b = torch.randn(512, 512, device=dev, dtype=torch.float16)
  kw = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, num_warps=4, num_stages=4)
  t0 = time.perf_counter(); mm(a, b, kern=mm_body, **kw); torch.cuda.synchronize(); t_first = time.perf_counter() - t0
  t0 = time.perf_counter(); mm(a, b, kern=mm_body, **kw); torch.cuda.synchronize(); t_second = time.perf_counter() - t0
  res["triton_matmul_cold_compile_s"] = t_first - t_second
  small = torch.rand(1024, device=dev); so = torch.empty_like(small)
  for _ in range(100): vadd(small, small, so)
  torch.cuda.synchronize()
  n = 5000
  t0 = time.perf_counter()
  for _ in range(n): vadd(small, small, so)
  torch.cuda.synchronize()
  res["triton_launch_us"] = (time.perf_counter() - t0) / n * 1e6
  t0 = time.perf_counter()
  for _ in range(n): torch.add(small, small, out=so)
  torch.cuda.synchronize()
  res["torch_add_launch_us"] = (time.perf_counter() - t0) / n * 1e6
  print({k: res[k] for k in res if "compile" in k or "launch" in k}, flush=True)

  # ---- bandwidth: vector add (seed 1) vs copy ceiling -----------------------------
  N = 1 << 28
  x = torch.rand(N, device=dev); y = torch.rand_like(x); o = torch.empty_like(x)
  vadd(x, y, o); assert torch.equal(o, x + y)
  ms_vadd = bench(lambda: vadd(x, y, o))
  ms_torch_add = bench(lambda: torch.add(x, y, out=o))
  ms_copy = bench(lambda: o.copy_(x))
  res["vadd_GBps_triton"] = 3 * 4 * N / ms_vadd / 1e6
  res["vadd_GBps_torch"] = 3 * 4 * N / ms_torch_add / 1e6
  res["copy_GBps"] = 2 * 4 * N / ms_copy / 1e6
  print("bandwidth GB/s: triton vadd %.0f  torch add %.0f  copy(read+write) %.0f" %
        (res["vadd_GBps_triton"], res["vadd_GBps_torch"], res["copy_GBps"]), flush=True)
  del x, y, o

# ---- matmul fp16 TFLOPS, seed 2's sweep subset ----------------------------------
sizes = [int(x) for x in SIZES.split(",")] if SIZES else [1024, 2048, 4096, 8192] if QUICK else [512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
rows = []
print("%6s %10s %10s %10s %8s" % ("MNK", "torch", "triton_g8", "triton_g0", "tri/torch"), flush=True)
for s in sizes:
    a = torch.randn(s, s, device=dev, dtype=torch.float16)
    b = torch.randn(s, s, device=dev, dtype=torch.float16)
    ref = torch.matmul(a, b)
    got = mm(a, b)
    err = ((got.float() - ref.float()).norm() / ref.float().norm()).item()
    fl = 2 * s * s * s * 1e-12
    t_torch = fl / (bench(lambda: torch.matmul(a, b)) * 1e-3)
    t_g8 = fl / (bench(lambda: mm(a, b, group=8)) * 1e-3)
    t_g0 = fl / (bench(lambda: mm(a, b, group=0)) * 1e-3)
    rows.append({"mnk": s, "torch": t_torch, "triton_g8": t_g8, "triton_g0": t_g0, "relerr": err,
                 "best": str(mm_tuned.best_config)})
    print("%6d %10.1f %10.1f %10.1f %8.3f  err=%.1e %s" % (s, t_torch, t_g8, t_g0, t_g8 / t_torch, err,
                                                           mm_tuned.best_config), flush=True)
res["matmul"] = rows
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], "anchors.json"), "w") as f:
        json.dump(res, f, indent=1)
print(json.dumps(res))
