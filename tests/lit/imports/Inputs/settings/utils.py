# Host helpers beside a @jit helper, as kernel packages keep them in a utils.py.
import functools

import torch
import triton
import triton.language as tl

MAX_FUSED_SIZE: int = 65536
next_power_of_2 = triton.next_power_of_2


def calculate_settings(n, **kwargs):
    BLOCK_SIZE = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"n = {n} exceeds the maximum CUDA blocksize = {MAX_FUSED_SIZE}.")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    return BLOCK_SIZE, num_warps


@functools.lru_cache
def is_hopper():
    return torch.cuda.get_device_capability()[0] == 9


@triton.jit
def triton_tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1
