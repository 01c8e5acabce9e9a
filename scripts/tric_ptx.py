# scripts/tric_ptx.py: a tric PTX file loaded into torch's CUDA context and launched through the
# driver API (ctypes, on torch's current stream), so that a benchmark times tric's kernel and
# Triton's in one process with one harness (triton.testing.do_bench). The PTX's metadata block
# (docs/ptx-metadata.md) gives the kernel, threads, shared memory, parameters and tensor maps.
# Used by tric_ptx_do_bench.py and bench_loops.py; elsewhere `python3 -m py_compile` checks it.
import ctypes
import re

import torch

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def check(result, what):
    if result != 0:
        raise RuntimeError("CUDA driver error %d (%s)" % (result, what))


class TricPtx:
    """One tric PTX file: load it, then launcher(grid, values) with one value per parameter
    (tensors for pointers, ints and floats for scalars)."""

    def __init__(self, cuda, path):
        text = open(path).read()
        head = dict(re.findall(r"^// tric\.(\w+) (.*)$", text, re.M))
        self.head = head
        self.consts = dict(kv.split("=") for kv in head.get("constexpr", "").split())
        self.params = head["params"].split()
        self.threads, self.shared = int(head["threads"]), int(head["shared"])
        self.kernel = head["kernel"]
        self.cuda = cuda
        self.module, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(self.module), text.encode() + b"\0"), "load")
        check(cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.module, self.kernel.encode()),
              "function")
        check(cuda.cuFuncSetAttribute(self.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      self.shared), "shared memory")
        # the TMA tensor maps (docs/ptx-metadata.md "tensor_map"), made per launcher as tric's
        # runtime makes them per launch, passed after the parameters
        self.tmaps = re.findall(r"^// tric\.tensor_map (.*)$", text, re.M)

    def tensor_map(self, line, values):
        f = dict(kv.split("=") for kv in line.split()[1:])
        dtype = {"fp16": (6, 2), "bf16": (9, 2), "fp32": (7, 4), "fp8e4nv": (0, 1),
                 "fp8e5": (0, 1)}[line.split()[0]]

        def value(v):
            if v == "*":
                return (1 << 31) - 1  # runtime.h RT_TMAP_UNBOUNDED_DIM
            x = 1
            for fac in v.split("*"):
                x *= values[int(fac[1:])] if fac.startswith("p") else int(fac)
            return x
        dims = [value(v) for v in f["dims"].split(",")]
        strides = [value(v) * dtype[1] for v in f["strides"].split(",")][1:]
        box = [int(v) for v in f["box"].split(",")]
        rank = len(dims)
        storage = ctypes.create_string_buffer(128 + 64)
        at = (ctypes.addressof(storage) + 63) // 64 * 64
        swz = {0: 0, 32: 1, 64: 2, 128: 3}[int(f["swizzle"])]
        check(self.cuda.cuTensorMapEncodeTiled(
            ctypes.c_void_p(at), dtype[0], rank, ctypes.c_void_p(values[int(f["base"])]),
            (ctypes.c_uint64 * rank)(*dims), (ctypes.c_uint64 * max(rank - 1, 1))(*strides),
            (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*([1] * rank)), 0, swz,
            3 if swz == 3 else 2, 0), "cuTensorMapEncodeTiled")
        return storage, ctypes.c_void_p(at)

    def launcher(self, grid, values, programs=None):
        if len(values) != len(self.params):
            raise ValueError("%s takes %d parameters, %d given" % (self.kernel, len(self.params),
                                                                 len(values)))
        args = []
        for p, v in zip(self.params, values):
            if p.startswith("*"):
                args.append(ctypes.c_uint64(v.data_ptr()))
            elif p.startswith("fp32"):
                args.append(ctypes.c_float(v))
            elif p.startswith("fp64"):
                args.append(ctypes.c_double(v))
            elif p.startswith("i64") or p.startswith("u64"):
                args.append(ctypes.c_int64(v))
            else:
                args.append(ctypes.c_int32(v))
        maps = [self.tensor_map(m, [getattr(x, "value", 0) for x in args]) for m in self.tmaps]
        grid = tuple(grid) + (1,) * (3 - len(grid))
        extra, workspace = [], None
        if "persistent" in self.head:
            # a persistent kernel (docs/runtime.md "Persistent kernels"), launched as tric's runtime
            # does: min(x y z, SMs x its blocks per SM) programs along x, then the grid's x, a
            # workspace (two i32 flags per program, zeroed, then from a 256-byte boundary
            # workspace bytes per program), and the grid's y and z as the kernel's axes ask
            fields = dict(kv.split("=") for kv in self.head["persistent"].split())
            # workspace=none: the kernel reads none (a grid made persistent): a null pointer
            per = -1 if fields["workspace"] == "none" else int(fields["workspace"])
            axes = int(fields.get("axes", 1))
            if axes not in (1, 2, 3):
                raise ValueError("%s: bad tric.persistent line '%s'" % (self.kernel,
                                                                       self.head["persistent"]))
            if (grid[1] != 1 and axes < 2) or (grid[2] != 1 and axes < 3):
                raise ValueError("%s is persistent, so its grid is one tile per program along %s; "
                                 "got %s" % (self.kernel, "x and y" if axes == 2 else "x", grid))
            tiles = grid[0] * grid[1] * grid[2]
            if tiles > 2**31 - 1:
                raise ValueError("%s is persistent and its grid %s has %d tiles; at most %d" %
                                 (self.kernel, grid, tiles, 2**31 - 1))
            blocks = ctypes.c_int(0)
            check(self.cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                ctypes.byref(blocks), self.fn, self.threads, ctypes.c_size_t(self.shared)),
                "occupancy")
            most = torch.cuda.get_device_properties(0).multi_processor_count * max(blocks.value, 1)
            flags = (4 * 2 * most + 255) // 256 * 256  # TRIC_WORKSPACE_FLAGS = 2
            if per >= 0:
                workspace = torch.zeros(flags + most * per, device="cuda", dtype=torch.uint8)
            extra = [ctypes.c_int32(grid[0]),
                     ctypes.c_uint64(workspace.data_ptr() if workspace is not None else 0)]
            extra += [ctypes.c_int32(n) for n in grid[1:axes]]
            # programs: another count, for experiments (the kernel is correct with any up to most)
            grid = (min(programs or most, most, tiles), 1, 1)
        params = (ctypes.c_void_p * (len(args) + len(maps) + len(extra)))(
            *([ctypes.addressof(x) for x in args] + [m[1].value for m in maps] +
              [ctypes.addressof(x) for x in extra]))
        args = args + extra

        def run():
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            check(self.cuda.cuLaunchKernel(self.fn, grid[0], grid[1], grid[2], self.threads, 1, 1,
                                           self.shared, stream, params, None), "launch")
        run.keep = (args, maps, params, values, workspace)  # the storage lives as long as the launcher
        return run


def median_times(sides, rounds=3, rep=100):
    """{name: median ms} of triton.testing.do_bench over rounds of sides ([(name, run)]), the
    order reversed every other round so that no side always runs first."""
    import statistics

    import triton

    times = {s: [] for s, _ in sides}
    for rnd in range(rounds):
        for s, run in (sides if rnd % 2 == 0 else sides[::-1]):
            times[s].append(triton.testing.do_bench(run, warmup=25, rep=rep,
                                                    return_mode="median"))
    return {s: statistics.median(v) for s, v in times.items()}
