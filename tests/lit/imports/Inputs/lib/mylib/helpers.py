import triton

OFFSET = 10.0


@triton.jit
def twice(x):
    return x + x
