# Constants and helpers imported by pkg/ops/*.py, beside host code tric sets aside.
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice as ld

SCALE: tl.constexpr = 3.0
ROWS = 4


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    return block, 4 if block < 2048 else [w for w in (8, 16)][0]


@triton.jit
def _inner(x):
    return x * SCALE


@triton.jit
def scale(x):
    return _inner(x) + ld.floor(x) * 0.0


@triton.jit
def bad_arange(x):
    return x + tl.arange(0, 3)
