import triton


@triton.jit
def f(x):
    return x +* 2
