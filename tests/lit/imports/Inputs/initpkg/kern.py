import triton
import triton.language as tl

from shimpkg.utils import BLOCK_DEFAULT, tl_extra_shim

rsqrt = tl_extra_shim.rsqrt


@triton.jit
def rsqrt_kernel(x_ptr, n, BLOCK: tl.constexpr = BLOCK_DEFAULT):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, rsqrt(x), mask=offs < n)
