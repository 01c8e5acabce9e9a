import triton
import triton.language as tl
from .broken import f


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, f(tl.load(x_ptr + offs)))
