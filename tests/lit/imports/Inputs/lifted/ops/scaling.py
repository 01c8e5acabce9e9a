from .. import jit
from .. import language as lng


@jit
def scaled(x):
    return x * lng.full(x.shape, 2.0, lng.float32)
