#!/usr/bin/env python3
# scripts/bench_liger_ce.py LIGER_DIR PTXDIR [--check] [--dump=DIR]: Liger-Kernel's fused cross-entropy
# (liger_cross_entropy_kernel of LIGER_DIR/src/liger_kernel/ops/cross_entropy.py, loss and the
# gradient written in place over the logits, 32 warps, one program per row) run by Triton beside
# tric's PTX of the same file (scripts/bench_liger_ce_ptx.sh writes PTXDIR), in one process, both
# timed by triton.testing.do_bench with the arguments Liger's cross_entropy_forward passes: no
# weight, no z-loss, no label smoothing, mean reduction, no ignored rows. BT = 4096 rows, V =
# 32000 and 128256, fp32 and bf16 logits. Correct first: the loss and the gradient of each side
# against torch's cross-entropy and its autograd. The timed launches run over one buffer, each
# overwriting what the last one wrote (the same traffic and work every time). Liger's package is not
# installed: the two modules the file imports are stubbed (liger_kernel.utils) or loaded from the
# checkout (liger_kernel.ops.utils). --check: correctness only; --dump=DIR: correctness, and
# Triton's PTX of each case written there.
import ctypes
import importlib.util
import os
import statistics
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
from tric_ptx import TricPtx  # noqa: E402

BT = 4096
IGNORE = -100


def load_liger(root):
    ops = os.path.join(root, "src", "liger_kernel", "ops")
    stub = types.ModuleType("liger_kernel.utils")
    stub.infer_device = lambda: "cuda"
    stub.infer_device_arch = lambda: "hopper"
    stub.is_npu_available = lambda: False
    pkg = types.ModuleType("liger_kernel")
    pkg.__path__ = []
    ops_pkg = types.ModuleType("liger_kernel.ops")
    ops_pkg.__path__ = []
    sys.modules.update({"liger_kernel": pkg, "liger_kernel.utils": stub,
                        "liger_kernel.ops": ops_pkg})
    mods = {}
    for name in ("utils", "cross_entropy"):
        spec = importlib.util.spec_from_file_location("liger_kernel.ops." + name,
                                                      os.path.join(ops, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods["cross_entropy"].liger_cross_entropy_kernel


def run_case(cuda, kern, ptxdir, dtype, vocab, timing, dump):
    name = {torch.float32: "fp32", torch.bfloat16: "bf16"}[dtype]
    tric = TricPtx(cuda, os.path.join(ptxdir, "ce_%s_%d.ptx" % (name, vocab)))
    torch.manual_seed(5)
    logits = (torch.randn(BT, vocab, device="cuda") * 2).to(dtype)
    target = torch.randint(0, vocab, (BT,), device="cuda")
    acc = torch.zeros(BT, device="cuda")
    pred = torch.zeros(BT, device="cuda", dtype=torch.int64)
    bufs = {}

    def make(side):
        x = logits.clone()
        loss = torch.zeros(BT, device="cuda", dtype=dtype)
        bufs[side] = (x, loss)
        return x, loss

    def triton_launch(x, loss):
        return kern[(BT,)](X_ptr=x, X_stride=x.stride(-2), Y_ptr=target, Y_stride=1,
                           weight_ptr=None, loss_ptr=loss, z_loss_ptr=None, loss_stride=1,
                           token_accuracy_ptr=None, token_accuracy_stride=0,
                           predicted_tokens_ptr=None, predicted_tokens_stride=0, n_cols=vocab,
                           n_non_ignore=BT, sum_non_ignore_weight=BT, ignore_index=IGNORE,
                           weight_sum=0.0, lse_square_scale=0.0, label_smoothing=0.0,
                           reduction="mean", softcap=None, RETURN_Z_LOSS=False,
                           RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False,
                           BLOCK_SIZE=min(32768, triton.next_power_of_2(vocab)), HAS_WEIGHT=False,
                           HAS_SOFTCAPPING=False, HAS_GRADIENTS=True, num_warps=32)

    def tric_args(x, loss):
        return [x, x.stride(-2), target, 1, acc, loss, loss, 1, acc, 0, pred, 0, vocab, BT, BT,
                0.0, IGNORE, 0.0]

    xt, lt = make("triton")
    compiled = triton_launch(xt, lt)
    if dump:
        with open(os.path.join(dump, "triton_ce_%s_%d.ptx" % (name, vocab)), "w") as f:
            f.write(compiled.asm["ptx"])
    xr, lr = make("tric")
    tric.launcher((BT,), tric_args(xr, lr))()
    torch.cuda.synchronize()
    # torch: the mean loss and its gradient
    ref_in = logits.float().detach().requires_grad_()
    ref_loss = torch.nn.functional.cross_entropy(ref_in, target, reduction="mean")
    ref_loss.backward()
    label = "liger_ce %s V=%d BT=%d" % (name, vocab, BT)
    ok = True
    for side in ("triton", "tric"):
        x, loss = bufs[side]
        dl = abs(loss.float().sum().item() - ref_loss.item())  # mean: rows come divided by BT
        dg = (x.float() - ref_in.grad).abs().max().item()
        good = dl < 1e-2 and dg < 1e-4 * (1 if dtype == torch.float32 else 100)
        ok &= good
        print("%-30s %-6s |loss - torch| %.3g, max |grad - torch| %.3g%s" % (
            label, side, dl, dg, "" if good else "  FAIL"), flush=True)
    same = torch.equal(bufs["tric"][0], bufs["triton"][0]) and torch.equal(bufs["tric"][1],
                                                                            bufs["triton"][1])
    diff = max((bufs["tric"][i].float() - bufs["triton"][i].float()).abs().max().item()
               for i in (0, 1))
    print("%-30s tric vs triton: %s, max |difference| %.3g" % (
        label, "bit-identical" if same else "differ", diff), flush=True)
    if not ok:
        sys.exit(label + ": outputs wrong")
    if not timing:
        return
    work = logits.clone()  # overwritten launch after launch: the same memory traffic each time
    tric_run = tric.launcher((BT,), tric_args(work, lr))
    sides = (("tric", tric_run), ("triton", lambda: triton_launch(work, lt)))
    times = {n: [] for n, _ in sides}
    for rnd in (1, 2, 3, 4):
        for n, run in (sides if rnd % 2 else sides[::-1]):
            times[n].append(triton.testing.do_bench(run, warmup=25, rep=100, return_mode="median"))
    t = {k: statistics.median(v) for k, v in times.items()}
    gbs = lambda ms: 3 * BT * vocab * logits.element_size() / (ms * 1e-3) / 1e9  # noqa: E731
    k_tric, k_triton = t["tric"], t["triton"]
    print("%-30s tric %.4f ms (%.0f GB/s), triton %.4f ms (%.0f GB/s), tric / triton %.3f" % (
        label, k_tric, gbs(k_tric), k_triton, gbs(k_triton), k_triton / k_tric), flush=True)


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: bench_liger_ce.py LIGER_DIR PTXDIR [--check]")
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    print("# triton %s, torch %s, %s" % (triton.__version__, torch.__version__,
                                         torch.cuda.get_device_name()), flush=True)
    kern = load_liger(argv[1])
    dump = next((a.split("=", 1)[1] for a in argv[3:] if a.startswith("--dump=")), None)
    for dtype in (torch.float32, torch.bfloat16):
        for vocab in (32000, 128256):
            run_case(cuda, kern, argv[2], dtype, vocab, "--check" not in argv[3:] and not dump,
                     dump)


if __name__ == "__main__":
    main(sys.argv)
