# A kernel file written as vLLM writes them: Triton's modules come through a package of the
# project (`from vllm.triton_utils import tl, triton`), host globals call into other packages,
# and a constexpr's default is host Python.
import torch

from vllm.logger import init_logger
from vllm.platforms import current_platform
from vllm.triton_utils import tl, triton
from vllm.triton_utils import triton_jit_decorator

logger = init_logger(__name__)
float8_info = torch.finfo(current_platform.fp8_dtype())


@triton.jit
def scale_kernel(x_ptr, n, USE_CLAMP: tl.constexpr, BLOCK: tl.constexpr,
                 FP8_MIN: tl.constexpr = float8_info.min,
                 FP8_MAX: tl.constexpr = float8_info.max):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n) * 2.0
    if USE_CLAMP:
        x = tl.clamp(x, FP8_MIN, FP8_MAX)
    tl.store(x_ptr + offs, x, mask=offs < n)


@triton.jit
def uses_logger(x_ptr):
    tl.store(x_ptr, logger)


@triton_jit_decorator
def merge_kernel(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), 0.0)
