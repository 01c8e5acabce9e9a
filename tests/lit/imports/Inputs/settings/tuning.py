# Autotune configs kept beside the kernels, as packages share one list among their kernels.
import itertools

import triton

BLOCKS = [32, 64]


def get_configs(stages=(2, 3)):
    return [triton.Config({"BLOCK": b}, num_stages=s) for b, s in itertools.product(BLOCKS, stages)]


def host_only_helper(x):
    with open(x) as f:
        return f.read()
