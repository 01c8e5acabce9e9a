# scripts/tri_module.py: an examples/*.tri file imported as a Python module, so that Triton runs
# the very kernels tric compiles (a .tri file is Python under another suffix). Used by
# triton_norms.py and tric_ptx_do_bench.py; elsewhere `python3 -m py_compile` checks it.
import importlib.machinery
import importlib.util
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXAMPLES = os.environ.get("TRIC_EXAMPLES_DIR") or os.path.join(ROOT, "examples")
BENCH = os.path.join(ROOT, "bench")


def load_tri(name, folder=None):
    """examples/NAME.tri (or FOLDER/NAME.tri) imported as a Python module (its @triton.jit
    kernels run on Triton)."""
    path = os.path.join(folder or EXAMPLES, name + ".tri")
    loader = importlib.machinery.SourceFileLoader("tri_" + name, path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = path
    sys.modules[loader.name] = mod  # Triton's JIT resolves globals through the module
    loader.exec_module(mod)
    return mod
