/* interp_memory.c: loads, stores and the launch's checks: masked vector add at n not a multiple of
 * the block, masked loads with `other`, out-of-bounds loads and stores reported with the .tri line,
 * the program and the element, and every store of the failed launch undone; masked-off lanes that
 * point anywhere are never touched; wrong argument counts, failed asserts and integer division by
 * zero stop the launch the same way; a long loop that stores runs in constant memory. */
#include "interp_test.h"

#include <sys/resource.h>

enum { BLOCK = 256 };

/* vector_add_kernel(x, y, out, n), as examples/vector_add.tri lowers. */
static Kernel *vector_add(void)
{
    Kernel *k = kernel_new("vector_add.tri", "vector_add_kernel");
    ValueId x = ir_param_add(k->f, type_ptr(DT_F32), "x_ptr", 16);
    ValueId y = ir_param_add(k->f, type_ptr(DT_F32), "y_ptr", 16);
    ValueId out = ir_param_add(k->f, type_ptr(DT_F32), "output_ptr", 16);
    ValueId n = ir_param_add(k->f, type_scalar(DT_I32), "n_elements", 1);
    Type it = block1(DT_I32, BLOCK);
    ValueId start =
        op2(k, OP_MUL, type_scalar(DT_I32), program_id(k, 0), cint(k, type_scalar(DT_I32), BLOCK));
    ValueId offs = op2(k, OP_ADD, it, op1(k, OP_SPLAT, it, start), make_range(k, 0, BLOCK));
    ValueId mask = op2(k, OP_CMP_LT, with_dtype(it, DT_I1), offs, op1(k, OP_SPLAT, it, n));
    ValueId a = load(k, 24, ptr_plus(k, x, offs), mask, 0);
    ValueId b = load(k, 25, ptr_plus(k, y, offs), mask, 0);
    ValueId sum = op2(k, OP_ADD, block1(DT_F32, BLOCK), a, b);
    store(k, 29, ptr_plus(k, out, offs), sum, mask);
    return k;
}

static void test_vector_add(StrBuf *err)
{
    int sizes[3] = {1, 1000, 98437};
    for (int s = 0; s < 3; s++) {
        int n = sizes[s];
        /* exactly n elements each: the masked-off lanes of the last block point past them */
        float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y),
              *out = malloc(n * sizeof *out);
        for (int i = 0; i < n; i++) {
            x[i] = (float)i * 0.5f;
            y[i] = 1.0f / (float)(i + 1);
            out[i] = -1;
        }
        Kernel *k = vector_add();
        InterpArg args[4] = {arg_ptr(x), arg_ptr(y), arg_ptr(out), arg_int(n)};
        InterpBuffer bufs[3] = {buf_of(x, n * 4), buf_of(y, n * 4), buf_of(out, n * 4)};
        bool ok = run_kernel(k, (n + BLOCK - 1) / BLOCK, args, 4, bufs, 3, err);
        CHECK(ok, "vector add n=%d: %s", n, err->data);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != x[i] + y[i];
        CHECK(bad == 0, "vector add n=%d: %d wrong elements", n, bad);
        kernel_free(k);
        free(x);
        free(y);
        free(out);
    }
}

/* out[i] = x[i] where i < n else `other` (-1.5), over one block, x holding only n elements. */
static void test_masked_load_other(StrBuf *err)
{
    Kernel *k = kernel_new("other.tri", "masked_other");
    ValueId x = ir_param_add(k->f, type_ptr(DT_F32), "x", 1);
    ValueId out = ir_param_add(k->f, type_ptr(DT_F32), "out", 1);
    ValueId n = ir_param_add(k->f, type_scalar(DT_I32), "n", 1);
    Type it = block1(DT_I32, 16);
    ValueId r = make_range(k, 0, 16);
    ValueId mask = op2(k, OP_CMP_LT, with_dtype(it, DT_I1), r, op1(k, OP_SPLAT, it, n));
    ValueId v = load(k, 3, ptr_plus(k, x, r), mask, cfloat(k, block1(DT_F32, 16), -1.5));
    store(k, 4, ptr_plus(k, out, r), v, 0);
    float xs[5] = {1, 2, 3, 4, 5}, o[16];
    InterpArg args[3] = {arg_ptr(xs), arg_ptr(o), arg_int(5)};
    InterpBuffer bufs[2] = {buf_of(xs, sizeof xs), buf_of(o, sizeof o)};
    CHECK(run_kernel(k, 1, args, 3, bufs, 2, err), "masked load: %s", err->data);
    for (int i = 0; i < 16; i++)
        CHECK(o[i] == (i < 5 ? xs[i] : -1.5f), "masked load with other [%d] = %g", i, o[i]);
    /* Without other, masked-off lanes read 0. */
    for (int i = 0; i < k->f->body.nops; i++)
        if (k->f->body.ops[i]->code == OP_LOAD)
            k->f->body.ops[i]->noperands = 2; /* drop `other` */
    CHECK(run_kernel(k, 1, args, 3, bufs, 2, err), "masked load: %s", err->data);
    for (int i = 0; i < 16; i++)
        CHECK(o[i] == (i < 5 ? xs[i] : 0.0f), "masked load without other [%d] = %g", i, o[i]);
    /* A mask that is all false: the pointers may point anywhere, nothing is touched. */
    args[0] = arg_ptr((void *)(uintptr_t)0x10);
    args[2] = arg_int(0);
    CHECK(run_kernel(k, 1, args, 3, bufs, 2, err), "all masked off must not be reported: %s",
          err->data);
    kernel_free(k);
}

/* out[pid * BLOCK + i] = pid + 1 with no mask: program 3 runs past a buffer of 3 blocks + 5. */
static void test_oob_store_undo(StrBuf *err)
{
    Kernel *k = kernel_new("oob.tri", "oob_store");
    ValueId out = ir_param_add(k->f, type_ptr(DT_F32), "out", 1);
    Type it = block1(DT_I32, BLOCK);
    ValueId pid = program_id(k, 0);
    ValueId offs =
        op2(k, OP_ADD, it,
            op1(k, OP_SPLAT, it,
                op2(k, OP_MUL, type_scalar(DT_I32), pid, cint(k, type_scalar(DT_I32), BLOCK))),
            make_range(k, 0, BLOCK));
    ValueId val = op1(k, OP_CAST, type_scalar(DT_F32),
                      op2(k, OP_ADD, type_scalar(DT_I32), pid, cint(k, type_scalar(DT_I32), 1)));
    store(k, 27, ptr_plus(k, out, offs), op1(k, OP_SPLAT, block1(DT_F32, BLOCK), val), 0);
    int n = 3 * BLOCK + 5;
    float *buf = malloc(n * sizeof *buf);
    for (int i = 0; i < n; i++)
        buf[i] = 7.0f;
    InterpArg args[1] = {arg_ptr(buf)};
    InterpBuffer bufs[1] = {buf_of(buf, n * 4)};
    bool ok = run_kernel(k, 4, args, 1, bufs, 1, err);
    CHECK(!ok, "the out-of-bounds store must fail the launch");
    printf("message: %s\n", err->data ? err->data : "(none)");
    char addr[64];
    snprintf(addr, sizeof addr, "writes address 0x%llx (4 bytes)",
             (unsigned long long)(uintptr_t)&buf[3 * BLOCK + 5]);
    CHECK(contains(err, "oob.tri:27: "), "names the .tri line: %s", err->data);
    CHECK(contains(err, "out-of-bounds store in program (3, 0, 0)"), "names the program: %s",
          err->data);
    CHECK(contains(err, "element 5 (index [5])"), "names the element: %s", err->data);
    CHECK(contains(err, addr), "names the address (%s): %s", addr, err->data);
    CHECK(contains(err, "outside every buffer passed to the launch"), "%s", err->data);
    CHECK(strchr(err->data, '\n') == NULL, "one line: %s", err->data);
    int changed = 0;
    for (int i = 0; i < n; i++)
        changed += buf[i] != 7.0f;
    CHECK(changed == 0,
          "%d elements stay changed after the failed launch (programs 0-2 and the "
          "first 5 lanes of 3 stored before the error)",
          changed);
    /* With a big enough buffer the same launch succeeds and keeps its stores. */
    float *big = malloc(4 * BLOCK * sizeof *big);
    args[0] = arg_ptr(big);
    bufs[0] = buf_of(big, 4 * BLOCK * 4);
    CHECK(run_kernel(k, 4, args, 1, bufs, 1, err), "in bounds: %s", err->data);
    CHECK(big[0] == 1 && big[BLOCK] == 2 && big[4 * BLOCK - 1] == 4, "stores kept: %g %g %g",
          big[0], big[BLOCK], big[4 * BLOCK - 1]);
    free(big);
    free(buf);
    kernel_free(k);
}

/* A <4x8> load from a buffer of 19 elements: element 19 is index [2, 3]. */
static void test_oob_load_2d(StrBuf *err)
{
    Kernel *k = kernel_new("load2d.tri", "oob_load");
    ValueId in = ir_param_add(k->f, type_ptr(DT_F16), "in", 1);
    ValueId out = ir_param_add(k->f, type_ptr(DT_F16), "out", 1);
    Type t2 = block2(DT_I32, 4, 8);
    ValueId rows = op1(k, OP_BROADCAST, t2, expand_dims(k, make_range(k, 0, 4), 1));
    ValueId cols = op1(k, OP_BROADCAST, t2, expand_dims(k, make_range(k, 0, 8), 0));
    ValueId offs = op2(k, OP_ADD, t2, op2(k, OP_MUL, t2, rows, cint(k, t2, 8)), cols);
    ValueId v = load(k, 42, ptr_plus(k, in, offs), 0, 0);
    store(k, 43, ptr_plus(k, out, offs), v, 0);
    uint16_t src[19], dst[32];
    memset(src, 0, sizeof src);
    InterpArg args[2] = {arg_ptr(src), arg_ptr(dst)};
    InterpBuffer bufs[2] = {buf_of(src, sizeof src), buf_of(dst, sizeof dst)};
    CHECK(!run_kernel(k, 1, args, 2, bufs, 2, err), "the load past 19 elements must fail");
    printf("message: %s\n", err->data ? err->data : "(none)");
    CHECK(contains(err, "load2d.tri:42: out-of-bounds load in program (0, 0, 0): element 19 (index "
                        "[2, 3]) reads address"),
          "%s", err->data);
    CHECK(contains(err, "(2 bytes)"), "%s", err->data);
    kernel_free(k);
}

static void test_wrong_arg_count(StrBuf *err)
{
    Kernel *k = vector_add();
    float x[4];
    InterpArg args[3] = {arg_ptr(x), arg_ptr(x), arg_ptr(x)};
    InterpBuffer bufs[1] = {buf_of(x, sizeof x)};
    CHECK(!run_kernel(k, 1, args, 3, bufs, 1, err), "3 arguments for 4 parameters must fail");
    CHECK(contains(err, "kernel vector_add_kernel takes 4 arguments, the launch passed 3"), "%s",
          err->data);
    kernel_free(k);
}

/* store out[i] = 1 for i < 8, then assert(i < 5): the failed assert undoes the store. */
static void test_assert(StrBuf *err)
{
    Kernel *k = kernel_new("assert.tri", "asserting");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    Type it = block1(DT_I32, 8);
    ValueId r = make_range(k, 0, 8);
    store(k, 10, ptr_plus(k, out, r), cint(k, it, 1), 0);
    ValueId c = op2(k, OP_CMP_LT, with_dtype(it, DT_I1), r, cint(k, it, 5));
    IrOp *a = ir_build(&k->b, OP_ASSERT, at_line(k, 12), &c, 1, NULL, 0, 0);
    a->sattr = "offs < 5";
    int32_t o[8] = {0};
    InterpArg args[1] = {arg_ptr(o)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(!run_kernel(k, 1, args, 1, bufs, 1, err), "the assert must fail");
    CHECK(contains(err, "assert.tri:12: assertion failed in program (0, 0, 0): element 5 (index "
                        "[5]): offs < 5"),
          "%s", err->data);
    int changed = 0;
    for (int i = 0; i < 8; i++)
        changed += o[i] != 0;
    CHECK(changed == 0, "the store before the failed assert is undone (%d changed)", changed);
    kernel_free(k);
}

/* out[pid] = 10 / (1 - pid): program 1 divides by zero. */
static void test_division_by_zero(StrBuf *err)
{
    Kernel *k = kernel_new("div.tri", "divide");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    Type s = type_scalar(DT_I32);
    ValueId pid = program_id(k, 0);
    ValueId q = ir_build_binary(&k->b, OP_DIV, at_line(k, 7), s, cint(k, s, 10),
                                op2(k, OP_SUB, s, cint(k, s, 1), pid));
    store(k, 8, op2(k, OP_ADDPTR, type_ptr(DT_I32), out, pid), q, 0);
    int32_t o[3] = {0, 0, 0};
    InterpArg args[1] = {arg_ptr(o)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(!run_kernel(k, 3, args, 1, bufs, 1, err), "division by zero must fail");
    CHECK(contains(err, "div.tri:7: integer division by zero (div) in program (1, 0, 0)"), "%s",
          err->data);
    CHECK(o[0] == 0, "program 0's store is undone: %d", o[0]);
    kernel_free(k);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* for i in range(0, 100000): acc += 1; store(out + r, acc): 10^5 iterations, each storing a
 * block, in constant memory (values reuse their storage; the undo log saves each page once). */
static void test_long_loop(StrBuf *err)
{
    Kernel *k = kernel_new("loop.tri", "long_loop");
    ValueId out = ir_param_add(k->f, type_ptr(DT_F32), "out", 1);
    Type ft = block1(DT_F32, 64);
    Type s = type_scalar(DT_I32);
    ValueId r = make_range(k, 0, 64);
    ValueId ptrs = ptr_plus(k, out, r);
    ValueId init = cfloat(k, ft, 0.0);
    ValueId ops[4] = {cint(k, s, 0), cint(k, s, 100000), cint(k, s, 1), init};
    IrOp *loop = ir_build(&k->b, OP_FOR, at_line(k, 5), ops, 4, &ft, 1, 1);
    ir_region_add_arg(k->f, &loop->regions[0], s, "i");
    ValueId acc = ir_region_add_arg(k->f, &loop->regions[0], ft, "acc");
    IrBuilder saved = k->b;
    k->b.region = &loop->regions[0];
    ValueId next = op2(k, OP_ADD, ft, acc, cfloat(k, ft, 1.0));
    store(k, 7, ptrs, next, 0);
    ir_build(&k->b, OP_YIELD, at_line(k, 8), &next, 1, NULL, 0, 0);
    k->b = saved;
    float o[64];
    InterpArg args[1] = {arg_ptr(o)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    long before = max_rss_kb();
    CHECK(run_kernel(k, 1, args, 1, bufs, 1, err), "long loop: %s", err->data);
    long grown = max_rss_kb() - before;
    CHECK(o[0] == 100000.0f && o[63] == 100000.0f, "long loop result %g", o[0]);
    CHECK(grown < 16 * 1024, "10^5 iterations grew the peak memory by %ld KiB", grown);
    kernel_free(k);
}

int main(void)
{
    StrBuf err = {0};
    test_vector_add(&err);
    test_masked_load_other(&err);
    test_oob_store_undo(&err);
    test_oob_load_2d(&err);
    test_wrong_arg_count(&err);
    test_assert(&err);
    test_division_by_zero(&err);
    test_long_loop(&err);
    strbuf_free(&err);
    if (test_failures) {
        printf("%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("interp_memory: all checks passed\n");
    return 0;
}
