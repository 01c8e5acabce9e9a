# A kernel file as it sits inside Triton's own package (triton/ops/), importing Triton relatively;
# lifted out of it, the relative module is no file, and those imports are Triton's.
import torch

from .. import Config, autotune, cdiv, heuristics, jit
from .. import language as tl
from ..language.extra import libdevice
from .perf_model import prune_configs, estimate_time


def small_configs():
    split = Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": 2}, num_stages=3,
                   num_warps=2)
    return [split]


@autotune(
    configs=[
        Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "SPLIT_K": 1}, num_stages=3, num_warps=4),
        Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "SPLIT_K": 1}, num_stages=4, num_warps=4),
    ] + small_configs(),
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": prune_configs, "perf_model": estimate_time, "top_k": 4},
)
@heuristics({
    "EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0,
})
@jit
def _kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_z = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    A = A + (rm[:, None] % M * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rn[None, :] % N * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            left = K - k * (BLOCK_K * SPLIT_K)
            a = tl.load(A, mask=rk[None, :] < left, other=0.0)
            b = tl.load(B, mask=rk[:, None] < left, other=0.0)
        acc += tl.dot(a, b)
        A += BLOCK_K * SPLIT_K * stride_ak
        B += BLOCK_K * SPLIT_K * stride_bk
    acc = libdevice.fmin(acc, 65504.0)
    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    if SPLIT_K == 1:
        tl.store(C, acc.to(C.dtype.element_ty), mask=mask)
    else:
        tl.atomic_add(C, acc.to(C.dtype.element_ty), mask=mask)


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda META: (cdiv(M, META["BLOCK_M"]), cdiv(N, META["BLOCK_N"]), META["SPLIT_K"])
    _kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  c.stride(0), c.stride(1))
    return c
