/* passes_seeds.c: the whole pass list (passes_run) on the seed kernels as the front end lowers them
 * from examples/vector_add.tri and examples/matmul.tri: the vector widths codegen will use
 * (axis_vector_width), loop-carried accumulators, where the converts land, shared memory. */
#include "driver/driver.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

static char *read_text(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    char *text = malloc((size_t)n + 1);
    *len = fread(text, 1, (size_t)n, fp);
    text[*len] = 0;
    fclose(fp);
    return text;
}

typedef struct Seed {
    CompileResult result;
    IrFunc *f; /* after passes_run */
    char *text;
    SrcFile file;
} Seed;

/* Lowers one kernel of examples/NAME through the driver, then runs passes_run on it. */
static bool seed_compile_with(Seed *s, const char *name, const char *kernel, const char *sig,
                              const Define *defs, int ndefs, int num_warps,
                              const PassOptions *given)
{
    char path[512];
    snprintf(path, sizeof path, "%s/examples/%s", TRIC_SOURCE_DIR, name);
    memset(s, 0, sizeof *s);
    s->text = read_text(path, &s->file.len);
    if (!s->text) {
        printf("cannot read %s\n", path);
        return false;
    }
    s->file.name = name;
    s->file.text = s->text;
    CompileOptions o = {
        .spec = {.kernel_name = kernel, .signature = sig, .defines = defs, .ndefines = ndefs},
        .emit = EMIT_IR,
        .num_warps = num_warps};
    Diag d = {0};
    bool ok = driver_compile(&s->file, &o, &s->result, &d);
    if (ok) {
        s->f = s->result.ir;
        PassOptions po = {.num_warps = num_warps, .num_stages = 3, .sm = 90};
        if (given)
            po = *given;
        ok = passes_run(s->f, &po, &d);
    }
    if (!ok)
        printf("%s: %s\n", name, d.text.data ? d.text.data : "(no message)");
    diag_free(&d);
    return ok;
}

static bool seed_compile(Seed *s, const char *name, const char *kernel, const char *sig,
                         const Define *defs, int ndefs, int num_warps)
{
    return seed_compile_with(s, name, kernel, sig, defs, ndefs, num_warps, NULL);
}

static void seed_free(Seed *s)
{
    compile_result_free(&s->result);
    free(s->text);
}

static void collect(IrRegion *r, OpCode code, IrOp **out, int *n, int max)
{
    for (int i = 0; i < r->nops; i++) {
        if (r->ops[i]->code == code && *n < max)
            out[(*n)++] = r->ops[i];
        for (int k = 0; k < r->ops[i]->nregions; k++)
            collect(&r->ops[i]->regions[k], code, out, n, max);
    }
}

static void test_vector_add(const char *sig, int want_width)
{
    Seed s;
    Define defs[] = {{"BLOCK_SIZE", "1024"}};
    if (!seed_compile(&s, "vector_add.tri", NULL, sig, defs, 1, 4)) {
        test_failures++;
        return;
    }
    IrOp *mem[8];
    int n = 0;
    collect(&s.f->body, OP_LOAD, mem, &n, 8);
    collect(&s.f->body, OP_STORE, mem, &n, 8);
    CHECK(n == 3, "%d memory ops", n);
    for (int i = 0; i < n; i++)
        CHECK(axis_vector_width(s.f, mem[i]) == want_width, "%s: %s width %d, want %d", sig,
              op_name(mem[i]->code), axis_vector_width(s.f, mem[i]), want_width);
    CHECK(s.f->shared_bytes == 0, "shared bytes %d", s.f->shared_bytes);
    seed_free(&s);
}

/* Seed 1 (masked, loop-carried pointers) and seed 2 (pointers offset in the loop): 8 fp16 per
 * access along K for A, along N for B; the masks offs_k < K - k*BK are constant over 16 when K is
 * :16, so they do not narrow the accesses; the only converts in the loop are the dot's operands. */
static void test_matmul(const char *kernel, const char *sig, const Define *defs, int ndefs,
                        int store_width)
{
    Seed s;
    if (!seed_compile(&s, "matmul.tri", kernel, sig, defs, ndefs, 4)) {
        test_failures++;
        return;
    }
    IrOp *loops[4], *loads[4], *stores[4], *dots[2];
    int nl = 0, nd = 0, ns = 0, nf = 0;
    collect(&s.f->body, OP_FOR, loops, &nf, 4);
    CHECK(nf == 1, "%s: %d loops", kernel, nf);
    if (nf != 1) {
        seed_free(&s);
        return;
    }
    /* the dot runs on FMA units here (no arch's mma chosen at these options), and since the
     * pipeline copies an FMA dot's tiles ahead too, the loop's two loads are async copies of the
     * tiles for a later iteration (which the dot reads from their slots): their widths are the
     * same */
    collect(&loops[0]->regions[0], OP_LOAD, loads, &nl, 4);
    collect(&loops[0]->regions[0], OP_ASYNC_COPY, loads, &nl, 4);
    collect(&s.f->body, OP_STORE, stores, &ns, 4);
    collect(&s.f->body, OP_DOT, dots, &nd, 2);
    CHECK(nl == 2 && ns == 1 && nd == 1, "%s: %d loads or copies %d stores %d dots", kernel, nl, ns,
          nd);
    if (nd == 1)
        CHECK(s.f->layouts[s.f->values[dots[0]->results[0]].layout].kind == LAYOUT_BLOCKED,
              "%s: the dot's accumulator is not blocked (FMA)", kernel);
    for (int i = 0; i < nl; i++)
        CHECK(axis_vector_width(s.f, loads[i]) == 8, "%s: load %d width %d, want 8", kernel, i,
              axis_vector_width(s.f, loads[i]));
    if (ns == 1)
        CHECK(axis_vector_width(s.f, stores[0]) == store_width, "%s: store width %d, want %d",
              kernel, axis_vector_width(s.f, stores[0]), store_width);
    /* the dot's operands are the only values the loop puts in another layout: local_loads of
     * their slots into its #dot_op layouts, which the dot reads itself (no converts left) */
    IrOp *converts[16], *reads[16];
    int nc = 0, nr = 0;
    collect(&loops[0]->regions[0], OP_CONVERT_LAYOUT, converts, &nc, 16);
    collect(&loops[0]->regions[0], OP_LOCAL_LOAD, reads, &nr, 16);
    CHECK(nc == 0 && nr == 2, "%s: %d converts and %d local_loads in the loop", kernel, nc, nr);
    for (int i = 0; i < nr; i++)
        CHECK(s.f->layouts[s.f->values[reads[i]->results[0]].layout].kind == LAYOUT_DOT_OPERAND,
              "%s: a local_load in the loop that does not feed the dot", kernel);
    /* The accumulator: the dot's c is the loop's region argument, in the dot's layout. */
    if (nd == 1) {
        ValueId c = dots[0]->operands[2];
        CHECK(s.f->values[c].def == NULL &&
                  s.f->values[c].layout == s.f->values[dots[0]->results[0]].layout,
              "%s: the accumulator is converted inside the loop", kernel);
        CHECK(dots[0]->smem_bytes == 0 && dots[0]->scratch.from[0] == DOT_FROM_SLOT &&
                  dots[0]->scratch.from[1] == DOT_FROM_SLOT && s.f->shared_bytes > 0,
              "%s: dot scratch %d (not read from the slots), kernel %d", kernel,
              dots[0]->smem_bytes, s.f->shared_bytes);
    }
    seed_free(&s);
}

/* The software pipeline (passes/pipeline_loops.c) on seed 2's 128x128x64 loop: with num_stages
 * S >= 2, two S-slot buffers (A 128x64, B 64x128 fp16, 16 KiB a slot, 128-byte swizzle), their
 * async copies in the prologue (S - 1 groups) and in the loop, async_wait S - 2 in the loop and 0
 * after it; on sm_90a a wgmma reading the slots with wgmma_wait 1 in the loop and 0 after it, on
 * sm_90 local_load into the dot operands and an ordinary dot; shared memory for the buffers, the
 * epilogue's convert reusing it. num_stages 1 leaves the loop as it is. */
static void test_pipeline(int num_stages, bool wgmma)
{
    Seed s;
    Define defs[] = {{"BLOCK_SIZE_M", "128"}, {"BLOCK_SIZE_N", "128"}, {"BLOCK_SIZE_K", "64"},
                     {"GROUP_SIZE_M", "8"},   {"T_C", "tl.float16"},   {"T_ACC", "tl.float32"}};
    PassOptions po = {.num_warps = 4,
                      .num_stages = num_stages,
                      .sm = 90,
                      .mma = true,
                      .wgmma = true,
                      .arch_specific = wgmma,
                      .verify = true};
    if (!seed_compile_with(&s, "matmul.tri", "kernel_matmul",
                           "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,"
                           "i32:1,i32:16,i32:1",
                           defs, 6, 4, &po)) {
        test_failures++;
        return;
    }
    const char *arch = wgmma ? "sm_90a" : "sm_90";
    IrOp *allocs[4], *loops[2], *copies[16], *waits[8], *wg[4], *wgw[4], *ll[4], *dots[4];
    int na = 0, nf = 0, nc = 0, nw = 0, nwg = 0, nwgw = 0, nll = 0, nd = 0;
    collect(&s.f->body, OP_LOCAL_ALLOC, allocs, &na, 4);
    collect(&s.f->body, OP_FOR, loops, &nf, 2);
    collect(&s.f->body, OP_ASYNC_COPY, copies, &nc, 16);
    collect(&s.f->body, OP_ASYNC_WAIT, waits, &nw, 8);
    collect(&s.f->body, OP_WGMMA, wg, &nwg, 4);
    collect(&s.f->body, OP_WGMMA_WAIT, wgw, &nwgw, 4);
    collect(&s.f->body, OP_LOCAL_LOAD, ll, &nll, 4);
    collect(&s.f->body, OP_DOT, dots, &nd, 4);
    CHECK(nf == 1, "%s stages %d: %d loops", arch, num_stages, nf);
    if (num_stages < 2) {
        CHECK(na == 0 && nc == 0 && nd == 1, "%s stages 1: %d buffers, %d copies, %d dots", arch,
              na, nc, nd);
        seed_free(&s);
        return;
    }
    /* sm_90a: the copies go through TMA (passes/tma.c), with a buffer of S mbarriers */
    CHECK(na == (wgmma ? 3 : 2), "%s stages %d: %d buffers", arch, num_stages, na);
    int ndata = 0;
    for (int i = 0; i < na; i++) {
        Type t = ir_type(s.f, allocs[i]->results[0]);
        if (t.rank == 2) {
            CHECK(wgmma && t.is_smem && t.dtype == DT_I64 && t.shape[0] == num_stages &&
                      t.shape[1] == 1 && allocs[i]->smem_bytes == 8 * num_stages,
                  "%s stages %d: an mbarrier buffer of %d slots, %d bytes", arch, num_stages,
                  t.shape[0], allocs[i]->smem_bytes);
            continue;
        }
        ndata++;
        const Layout *l = &s.f->layouts[s.f->values[allocs[i]->results[0]].layout];
        CHECK(t.is_smem && t.rank == 3 && t.shape[0] == num_stages, "%s stages %d: buffer %d slots",
              arch, num_stages, t.shape[0]);
        CHECK(l->kind == LAYOUT_SHARED && l->shared.swizzle == 128 && l->shared.order[0] == 1,
              "%s stages %d: buffer %d not 128-byte swizzled along dim 1", arch, num_stages, i);
        CHECK(allocs[i]->smem_offset % 1024 == 0 && allocs[i]->smem_bytes == num_stages * 16384,
              "%s stages %d: buffer at %d, %d bytes", arch, num_stages, allocs[i]->smem_offset,
              allocs[i]->smem_bytes);
    }
    CHECK(ndata == 2, "%s stages %d: %d data buffers", arch, num_stages, ndata);
    if (wgmma) {
        IrOp *tl[16], *ex[8], *mw[4], *mi[2], *mv[2];
        int ntl = 0, nex = 0, nmw = 0, nmi = 0, nmv = 0;
        collect(&s.f->body, OP_TMA_LOAD, tl, &ntl, 16);
        collect(&s.f->body, OP_MBAR_EXPECT, ex, &nex, 8);
        collect(&s.f->body, OP_MBAR_WAIT, mw, &nmw, 4);
        collect(&s.f->body, OP_MBAR_INIT, mi, &nmi, 2);
        collect(&s.f->body, OP_MBAR_INVAL, mv, &nmv, 2);
        CHECK(nc == 0 && nw == 0 && ntl == 2 * num_stages && nex == num_stages && nmw == 1 &&
                  nmi == 1 && nmv == 1 && s.f->ntmaps == 2,
              "%s stages %d: %d async copies, %d waits, %d tma loads, %d expects, %d mbarrier "
              "waits, %d inits, %d invals, %d tensor maps",
              arch, num_stages, nc, nw, ntl, nex, nmw, nmi, nmv, s.f->ntmaps);
        for (int i = 0; i < nex; i++)
            CHECK(ex[i]->attr[0] == 2 * 16384, "%s stages %d: an expect of %lld bytes", arch,
                  num_stages, (long long)ex[i]->attr[0]);
        for (int m = 0; m < s.f->ntmaps; m++) {
            const TensorMap *tm = &s.f->tmaps[m];
            /* A [M, K] rows stride_am (param 6), B [K, N] rows stride_bk (param 8); the K loop
             * never checks a bound */
            CHECK(tm->rank == 2 && tm->dtype == DT_F16 && tm->base_param == m &&
                      tm->strides[0].constant == 1 && tm->strides[0].nparams == 0 &&
                      tm->strides[1].nparams == 1 && tm->strides[1].params[0] == 6 + 2 * m &&
                      tm->dims[0].unbounded && tm->dims[1].unbounded && tm->box[0] == 64 &&
                      tm->box[1] == (m == 0 ? 128 : 64) && tm->swizzle == 128,
                  "%s stages %d: tensor map %d", arch, num_stages, m);
        }
    } else {
        /* two copies per prologue iteration and two in the loop */
        CHECK(nc == 2 * num_stages, "%s stages %d: %d async copies", arch, num_stages, nc);
        CHECK(nw == 2 && waits[0]->attr[0] == num_stages - 2 && waits[1]->attr[0] == 0,
              "%s stages %d: %d async waits", arch, num_stages, nw);
    }
    if (wgmma) {
        CHECK(nwg == 1 && nwgw == 2 && nd == 0 && nll == 0,
              "%d wgmma, %d waits, %d dots, %d local loads", nwg, nwgw, nd, nll);
        if (nwgw == 2)
            CHECK(wgw[0]->attr[0] == 1 && wgw[1]->attr[0] == 0, "wgmma waits %lld, %lld",
                  (long long)wgw[0]->attr[0], (long long)wgw[1]->attr[0]);
    } else {
        CHECK(nwg == 0 && nd == 1 && nll == 2, "sm_90: %d wgmma, %d dots, %d local loads", nwg, nd,
              nll);
    }
    /* the buffers, then the epilogue's convert of the 128x128 fp32 accumulator over them */
    CHECK(s.f->shared_bytes >= 2 * num_stages * 16384, "%s stages %d: shared bytes %d", arch,
          num_stages, s.f->shared_bytes);
    seed_free(&s);
}

int main(void)
{
    for (int stages = 1; stages <= 5; stages++) {
        test_pipeline(stages, true);
        test_pipeline(stages, false);
    }
    test_vector_add("*fp32:16,*fp32:16,*fp32:16,i32:16", 4);
    test_vector_add("*fp32:16,*fp32:16,*fp32:16,i32", 1); /* the mask is not provably uniform */
    test_vector_add("*fp32,*fp32,*fp32,i32:16", 1);       /* pointers only 4-byte aligned */
    Define seed1[] = {{"BLOCK_SIZE_M", "64"}, {"BLOCK_SIZE_N", "64"}, {"BLOCK_SIZE_K", "32"}};
    /* fp32 C: 4 fp32 = 128 bits per store. */
    test_matmul(
        "matmul_kernel",
        "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
        seed1, 3, 4);
    Define seed2[] = {{"BLOCK_SIZE_M", "128"}, {"BLOCK_SIZE_N", "128"}, {"BLOCK_SIZE_K", "32"},
                      {"GROUP_SIZE_M", "8"},   {"T_C", "tl.float16"},   {"T_ACC", "tl.float32"}};
    test_matmul("kernel_matmul",
                "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
                seed2, 6, 8);
    if (test_failures)
        printf("%d failure(s)\n", test_failures);
    else
        printf("ok\n");
    return test_failures ? 1 : 0;
}
