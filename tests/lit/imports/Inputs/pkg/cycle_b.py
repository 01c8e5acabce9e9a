import triton
from . import cycle_a


@triton.jit
def add_base(x):
    return x + cycle_a.BASE
