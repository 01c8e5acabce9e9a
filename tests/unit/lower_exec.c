/* lower_exec.c: what lowering means, checked by running it. Small kernels that exercise the
 * lowering rules (run-time if with yields, early return, while, negative-step and static_range
 * loops, inlined helpers, reductions with keep_dims, where with broadcasting, argmax, casts,
 * C-style // and % on negative ints, true division, shifts, ternaries, tuples through if and for)
 * are compiled to tile IR by driver_compile and run by the CPU interpreter against C references.
 * Every lowered op must also carry a .tri location, and elementwise ops must see operands of the
 * result's shape. */
#include "driver/driver.h"
#include "exec_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static IrFunc *compile(const char *name, const char *src, const char *signature, const Define *defs,
                       int ndefs, CompileResult *res)
{
    Compiled c;
    bool ok = exec_compile(&c, name, src, NULL, signature, defs, ndefs);
    *res = c.res;
    return ok ? c.ir : NULL;
}

/* Every op has a location in the .tri file; elementwise ops take operands of the result's shape
 * (lowering inserts splat/broadcast); arithmetic takes operands of the result's dtype. */
static void check_region(const IrFunc *f, const IrRegion *r, const char *name)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        CHECK(op->loc.file && op->loc.line > 0, "%s: op %s has no location", name,
              op_name(op->code));
        if (op_has(op->code, OPT_ELEMENTWISE) && op->nresults == 1) {
            Type rt = ir_type(f, op->results[0]);
            for (int k = 0; k < op->noperands; k++) {
                Type ot = ir_type(f, op->operands[k]);
                CHECK(type_same_shape(ot, rt),
                      "%s: %s operand %d has another shape than its result", name,
                      op_name(op->code), k);
                bool same_dtype = op->code >= OP_ADD && op->code <= OP_CEIL;
                if (same_dtype)
                    CHECK(ot.dtype == rt.dtype && ot.is_ptr == rt.is_ptr,
                          "%s: %s operand %d has another dtype than its result", name,
                          op_name(op->code), k);
            }
        }
        for (int k = 0; k < op->nregions; k++)
            check_region(f, &op->regions[k], name);
    }
}

/* ---- control flow ------------------------------------------------------------------------------ */

static const char control_src[] = "import triton\n"
                                  "import triton.language as tl\n"
                                  "\n"
                                  "@triton.jit\n"
                                  "def control(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                                  "    pid = tl.program_id(0)\n"
                                  "    if pid >= 2:\n"
                                  "        return\n"
                                  "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
                                  "    mask = offs < n\n"
                                  "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)\n"
                                  "    scale = 1.0\n"
                                  "    if pid == 1:\n"
                                  "        scale = 3.0\n"
                                  "        x = x + 1.0\n"
                                  "    else:\n"
                                  "        x = x - 1.0\n"
                                  "    i = 0\n"
                                  "    acc = 0.0\n"
                                  "    while i < 4:\n"
                                  "        acc += i\n"
                                  "        i += 1\n"
                                  "    t = 0\n"
                                  "    for k in range(10, 0, -3):\n"
                                  "        t += k\n"
                                  "    for j in tl.static_range(3):\n"
                                  "        t = t * 2 + j\n"
                                  "    y = x * scale + acc + t + tl.sum(x, axis=0)\n"
                                  "    tl.store(out_ptr + offs, y, mask=mask)\n";

static void test_control(void)
{
    enum { BLOCK = 16, N = 40 }; /* program 1's block is partial; program 2 returns at once */
    Define defs[] = {{"BLOCK", "16"}};
    CompileResult res = {0};
    IrFunc *f = compile("control.tri", control_src, "*fp32,*fp32,i32", defs, 1, &res);
    if (!f)
        return;
    check_region(f, &f->body, "control");
    float x[3 * BLOCK], out[3 * BLOCK];
    for (int i = 0; i < 3 * BLOCK; i++) {
        x[i] = (float)(i % 7) - 2.5f;
        out[i] = -1000.0f;
    }
    InterpArg args[] = {P(x), P(out), I(N)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(out, sizeof out)};
    if (!run(f, 3, args, 3, bufs, 2)) {
        compile_result_free(&res);
        return;
    }
    /* acc = 0+1+2+3 = 6; t = 10+7+4+1 = 22, then ((22*2+0)*2+1)*2+2 = 180. */
    for (int pid = 0; pid < 2; pid++) {
        float xs[BLOCK], sum = 0.0f;
        for (int i = 0; i < BLOCK; i++) {
            int o = pid * BLOCK + i;
            float v = o < N ? x[o] : 0.0f;
            xs[i] = pid == 1 ? v + 1.0f : v - 1.0f;
            sum += xs[i];
        }
        for (int i = 0; i < BLOCK; i++) {
            int o = pid * BLOCK + i;
            float want = o < N ? xs[i] * (pid == 1 ? 3.0f : 1.0f) + 6.0f + 180.0f + sum : -1000.0f;
            CHECK(fabsf(out[o] - want) <= 1e-4f * fmaxf(1.0f, fabsf(want)),
                  "control: out[%d] = %g, want %g", o, out[o], want);
        }
    }
    for (int i = 2 * BLOCK; i < 3 * BLOCK; i++)
        CHECK(out[i] == -1000.0f, "control: program 2 returned early but out[%d] = %g", i, out[i]);
    compile_result_free(&res);
}

/* ---- helpers, reductions, where, casts, ternaries ---------------------------------------------- */

static const char misc_src[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def clamp_add(x, lo, hi):\n"
    "    return tl.minimum(tl.maximum(x, lo), hi) + 1\n"
    "\n"
    "@triton.jit\n"
    "def misc(x_ptr, h_ptr, out_ptr, idx_ptr, n, BM: tl.constexpr, BN: tl.constexpr):\n"
    "    rm = tl.arange(0, BM)\n"
    "    rn = tl.arange(0, BN)\n"
    "    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])\n"
    "    c = clamp_add(x, -0.5, 0.5)\n"
    "    rs = tl.sum(c, axis=1, keep_dims=True)\n"
    "    w = tl.where(x > 0, c, rs)\n"
    "    am = tl.argmax(x, axis=1)\n"
    "    h = tl.load(h_ptr + rn).to(tl.float32)\n"
    "    m = tl.max(h, axis=0)\n"
    "    sel = m if n > 3 else -m\n"
    "    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], w + sel)\n"
    "    tl.store(idx_ptr + rm, am)\n";

static void test_misc(int n)
{
    enum { BM = 4, BN = 8 };
    Define defs[] = {{"BM", "4"}, {"BN", "8"}};
    CompileResult res = {0};
    IrFunc *f = compile("misc.tri", misc_src, "*fp32,*fp16,*fp32,*i32,i32", defs, 2, &res);
    if (!f)
        return;
    check_region(f, &f->body, "misc");
    float x[BM * BN], out[BM * BN];
    uint16_t h[BN];
    int32_t idx[BM];
    for (int i = 0; i < BM * BN; i++)
        x[i] = (float)((i * 37) % 19) / 8.0f - 1.0f;
    float hmax = -INFINITY;
    for (int i = 0; i < BN; i++) {
        float v = (float)(i * 3 % 5) - 1.25f; /* exact in fp16 */
        uint32_t bits;
        memcpy(&bits, &v, 4);
        int e = (int)((bits >> 23) & 255) - 127 + 15;
        h[i] = (uint16_t)(((bits >> 16) & 0x8000) |
                          (v == 0.0f ? 0 : ((uint32_t)e << 10) | ((bits >> 13) & 1023)));
        hmax = fmaxf(hmax, v);
    }
    InterpArg args[] = {P(x), P(h), P(out), P(idx), I(n)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(h, sizeof h), B(out, sizeof out), B(idx, sizeof idx)};
    if (!run(f, 1, args, 5, bufs, 4)) {
        compile_result_free(&res);
        return;
    }
    float sel = n > 3 ? hmax : -hmax;
    for (int r = 0; r < BM; r++) {
        float rs = 0.0f;
        int best = 0;
        for (int c = 0; c < BN; c++) {
            float v = x[r * BN + c];
            rs += fminf(fmaxf(v, -0.5f), 0.5f) + 1.0f;
            if (v > x[r * BN + best])
                best = c;
        }
        for (int c = 0; c < BN; c++) {
            float v = x[r * BN + c];
            float cv = fminf(fmaxf(v, -0.5f), 0.5f) + 1.0f;
            float want = (v > 0 ? cv : rs) + sel;
            CHECK(fabsf(out[r * BN + c] - want) <= 1e-5f * fmaxf(1.0f, fabsf(want)),
                  "misc(n=%d): out[%d][%d] = %g, want %g", n, r, c, out[r * BN + c], want);
        }
        CHECK(idx[r] == best, "misc: argmax of row %d = %d, want %d", r, idx[r], best);
    }
    compile_result_free(&res);
}

/* ---- integer semantics -------------------------------------------------------------------------- */

static const char ints_src[] = "import triton\n"
                               "import triton.language as tl\n"
                               "\n"
                               "@triton.jit\n"
                               "def ints(a_ptr, q_ptr, m_ptr, d_ptr, s_ptr, BLOCK: tl.constexpr):\n"
                               "    r = tl.arange(0, BLOCK)\n"
                               "    a = tl.load(a_ptr + r)\n"
                               "    tl.store(q_ptr + r, a // 3)\n"
                               "    tl.store(m_ptr + r, a % 3)\n"
                               "    tl.store(d_ptr + r, a / 2)\n"
                               "    tl.store(s_ptr + r, ((a << 2) >> 1) + (~a) + (a != 0))\n";

static void test_ints(void)
{
    enum { BLOCK = 16 };
    Define defs[] = {{"BLOCK", "16"}};
    CompileResult res = {0};
    IrFunc *f = compile("ints.tri", ints_src, "*i32,*i32,*i32,*fp32,*i32", defs, 1, &res);
    if (!f)
        return;
    check_region(f, &f->body, "ints");
    int32_t a[BLOCK], q[BLOCK], m[BLOCK], s[BLOCK];
    float d[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        a[i] = i - 8; /* negatives: // and % truncate toward zero, as in C (Triton) */
    InterpArg args[] = {P(a), P(q), P(m), P(d), P(s)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(q, sizeof q), B(m, sizeof m), B(d, sizeof d),
                           B(s, sizeof s)};
    if (!run(f, 1, args, 5, bufs, 5)) {
        compile_result_free(&res);
        return;
    }
    for (int i = 0; i < BLOCK; i++) {
        CHECK(q[i] == a[i] / 3, "ints: %d // 3 = %d, want %d", a[i], q[i], a[i] / 3);
        CHECK(m[i] == a[i] % 3, "ints: %d %% 3 = %d, want %d", a[i], m[i], a[i] % 3);
        CHECK(d[i] == (float)a[i] / 2.0f, "ints: %d / 2 = %g, want %g", a[i], d[i],
              (float)a[i] / 2.0f);
        int32_t want = ((int32_t)((uint32_t)a[i] << 2) >> 1) + ~a[i] + (a[i] != 0);
        CHECK(s[i] == want, "ints: shifts of %d = %d, want %d", a[i], s[i], want);
    }
    compile_result_free(&res);
}

/* ---- nested regions ---------------------------------------------------------------------------- */

static const char nested_src[] = "import triton\n"
                                 "import triton.language as tl\n"
                                 "\n"
                                 "@triton.jit\n"
                                 "def bump(v, k):\n"
                                 "    if k % 2 == 0:\n"
                                 "        v = v + k\n"
                                 "    return v\n"
                                 "\n"
                                 "@triton.jit\n"
                                 "def nested(x_ptr, out_ptr, n, B: tl.constexpr):\n"
                                 "    pid = tl.program_id(0)\n"
                                 "    if pid > 3:\n"
                                 "        return\n"
                                 "    r = tl.arange(0, B)\n"
                                 "    acc = tl.zeros((B,), dtype=tl.float32)\n"
                                 "    cnt = 0\n"
                                 "    for i in range(n):\n"
                                 "        x = tl.load(x_ptr + i * B + r)\n"
                                 "        if i % 3 == 0:\n"
                                 "            acc += x\n"
                                 "            cnt += 1\n"
                                 "        j = 0\n"
                                 "        while j < i:\n"
                                 "            acc = acc + 1.0\n"
                                 "            j += 1\n"
                                 "        for q in range(1, 3):\n"
                                 "            acc = bump(acc, q + pid)\n"
                                 "    total = tl.sum(acc, axis=0)\n"
                                 "    if cnt > 1:\n"
                                 "        total = total * 2\n"
                                 "    tl.store(out_ptr + pid, total)\n";

/* Loop-carried values through an if inside a for, a while inside the for, a helper with its own
 * run-time if called in an inner loop, and an early return. */
static void test_nested(int n)
{
    enum { BLK = 8, GRID = 6 };
    Define defs[] = {{"B", "8"}};
    CompileResult res = {0};
    IrFunc *f = compile("nested.tri", nested_src, "*fp32,*fp32,i32", defs, 1, &res);
    if (!f)
        return;
    check_region(f, &f->body, "nested");
    float x[8 * BLK], out[GRID];
    for (int i = 0; i < 8 * BLK; i++)
        x[i] = (float)((i * 5) % 11) * 0.25f;
    for (int i = 0; i < GRID; i++)
        out[i] = -1.0f;
    InterpArg args[] = {P(x), P(out), I(n)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(out, sizeof out)};
    if (!run(f, GRID, args, 3, bufs, 2)) {
        compile_result_free(&res);
        return;
    }
    for (int pid = 0; pid < GRID; pid++) {
        float want = -1.0f;
        if (pid <= 3) {
            float acc[BLK] = {0};
            int cnt = 0;
            for (int i = 0; i < n; i++) {
                for (int e = 0; e < BLK; e++) {
                    if (i % 3 == 0)
                        acc[e] += x[i * BLK + e];
                    acc[e] += (float)i; /* the while adds 1.0 i times */
                    for (int q = 1; q < 3; q++)
                        if ((q + pid) % 2 == 0)
                            acc[e] += (float)(q + pid);
                }
                if (i % 3 == 0)
                    cnt++;
            }
            want = 0.0f;
            for (int e = 0; e < BLK; e++)
                want += acc[e];
            if (cnt > 1)
                want *= 2.0f;
        }
        CHECK(fabsf(out[pid] - want) <= 1e-4f * fmaxf(1.0f, fabsf(want)),
              "nested(n=%d): out[%d] = %g, want %g", n, pid, out[pid], want);
    }
    compile_result_free(&res);
}

/* ---- tuples ---------------------------------------------------------------------------------- */

static const char tuples_src[] = "import triton\n"
                                 "import triton.language as tl\n"
                                 "\n"
                                 "@triton.jit\n"
                                 "def divmod_(a, b):\n"
                                 "    return a // b, a % b\n"
                                 "\n"
                                 "@triton.jit\n"
                                 "def tuples(out_ptr, n):\n"
                                 "    pid = tl.program_id(0)\n"
                                 "    q, r = divmod_(pid, n)\n"
                                 "    q, r = r, q\n"
                                 "    t = divmod_(q, n)\n"
                                 "    if pid > 4:\n"
                                 "        t = divmod_(r + 1, n)\n"
                                 "    for i in range(3):\n"
                                 "        t = (t[1], t[0] + i)\n"
                                 "    a, b = t\n"
                                 "    tl.store(out_ptr + pid, a * 100 + b)\n";

static void test_tuples(void)
{
    enum { GRID = 8, N = 3 };
    CompileResult res = {0};
    IrFunc *f = compile("tuples.tri", tuples_src, "*i32,i32", NULL, 0, &res);
    if (!f)
        return;
    check_region(f, &f->body, "tuples");
    int32_t out[GRID];
    InterpArg args[] = {P(out), I(N)};
    InterpBuffer bufs[] = {B(out, sizeof out)};
    if (!run(f, GRID, args, 2, bufs, 1)) {
        compile_result_free(&res);
        return;
    }
    for (int pid = 0; pid < GRID; pid++) {
        int q = pid % N, r = pid / N; /* after the swap */
        int t0 = q / N, t1 = q % N;
        if (pid > 4) {
            t0 = (r + 1) / N;
            t1 = (r + 1) % N;
        }
        for (int i = 0; i < 3; i++) {
            int n0 = t1, n1 = t0 + i;
            t0 = n0;
            t1 = n1;
        }
        CHECK(out[pid] == t0 * 100 + t1, "tuples: out[%d] = %d, want %d", pid, out[pid],
              t0 * 100 + t1);
    }
    compile_result_free(&res);
}

int main(void)
{
    test_control();
    test_misc(5);
    test_misc(2);
    test_ints();
    test_nested(0);
    test_nested(5);
    test_tuples();
    if (test_failures) {
        printf("%d failure(s)\n", test_failures);
        return 1;
    }
    printf("lower_exec: all passed\n");
    return 0;
}
