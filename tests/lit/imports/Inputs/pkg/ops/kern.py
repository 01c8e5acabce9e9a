# Relative (..utils), absolute through -I (mylib.helpers), aliases (as sc, as H), an imported
# constexpr (SCALE, H.OFFSET), and an import of a module that does not exist, never used.
import torch
import triton
import triton.language as tl
from ..utils import scale as sc, SCALE
from mylib.helpers import twice
import mylib.helpers as H
from .missing import nothing


@triton.jit
def k(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(o_ptr + offs, H.twice(sc(x)) + twice(x) * H.OFFSET + SCALE, mask=m)


def launch(x):
    out = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out
