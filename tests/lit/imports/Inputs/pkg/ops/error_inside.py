import triton
import triton.language as tl
from .. import utils


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, utils.bad_arange(tl.load(x_ptr + offs)))
