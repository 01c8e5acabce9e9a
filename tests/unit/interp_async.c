/* interp_async.c: the memory pipeline on the interpreter. Kernels are .tir text (ir_parse), one
 * template each, with a line or two swapped to make a wrong schedule:
 *   - two slots filled by async_copy (one masked), committed, waited for and read back with
 *     local_load: the data, masked-off elements 0;
 *   - an async_copy past the end of its buffer fails like a load does;
 *   - a local_load before the async_wait (or before the async_commit) of its copy fails with the
 *     discipline message;
 *   - an async_copy into a slot that a wgmma not yet retired by wgmma_wait reads fails;
 *   - a read of a wgmma's result that a wgmma_wait left pending fails;
 *   - wgmma (chained through its accumulator) + wgmma_wait equals dot on the same data, bit for
 *     bit, and a host reference;
 *   - tma_load through a tensor map with a bounded dim, on mbarriers: the data, zero outside the
 *     bound; a read before its mbar_wait, and waits for phases that cannot complete, fail. */
#include "interp_test.h"

/* tmpl with each "@KEY@" replaced (malloc'd). */
static char *subst(const char *tmpl, const char *const *kv, int n)
{
    StrBuf sb = {0};
    for (const char *p = tmpl; *p;) {
        int hit = -1;
        for (int i = 0; i < n; i++)
            if (!strncmp(p, kv[2 * i], strlen(kv[2 * i])))
                hit = i;
        if (hit >= 0) {
            strbuf_append(&sb, kv[2 * hit + 1]);
            p += strlen(kv[2 * hit]);
        } else {
            strbuf_putc(&sb, *p++);
        }
    }
    return strbuf_take(&sb);
}

typedef struct Parsed {
    Arena *arena;
    IrFunc *f;
    char *text;
    SrcFile file;
} Parsed;

/* Parses and verifies (the verifier must accept every kernel here: the schedule is the
 * interpreter's to check, not the verifier's). */
static bool parse_kernel(Parsed *p, char *text)
{
    p->arena = arena_new();
    p->text = text;
    p->file = (SrcFile){.name = "async.tir", .text = text, .len = strlen(text)};
    Diag d = {0};
    p->f = ir_parse(&p->file, p->arena, &d);
    CHECK(p->f, "parse:\n%s\n%s", d.text.data ? d.text.data : "", text);
    bool ok = p->f && ir_verify(p->f, "test", &d);
    CHECK(!p->f || ok, "verify:\n%s", d.text.data ? d.text.data : "");
    diag_free(&d);
    return ok;
}

static void parsed_free(Parsed *p)
{
    arena_free(p->arena);
    free(p->text);
}

static bool launch(Parsed *p, int gx, const InterpArg *args, int nargs, const InterpBuffer *bufs,
                   int nbufs, StrBuf *err)
{
    InterpLaunch l = {
        .grid = {gx, 1, 1}, .args = args, .nargs = nargs, .buffers = bufs, .nbuffers = nbufs};
    strbuf_clear(err);
    return interp_run(p->f, &l, err);
}

/* An fp16 that holds v exactly (v a small multiple of a power of two, normal or zero). */
static uint16_t half_exact(float v)
{
    if (v == 0)
        return 0;
    uint16_t s = v < 0 ? 0x8000 : 0;
    int e;
    float m = frexpf(fabsf(v), &e); /* |v| = m * 2^e, m in [0.5, 1) */
    return s | (uint16_t)((e + 14) << 10) | (uint16_t)((2 * m - 1) * 1024);
}

/* ---- copy, commit, wait, local_load ------------------------------------------------------------ */

/* x[0..128) (masked by n) into slot 0 and x[128..256) into slot 1 of a 3-slot <8x16> buffer,
 * in two groups; each slot read back after its wait and stored to out at the same offsets. */
static const char copy2[] = "kernel @copy2(%0: *fp16 {name = \"x\"}, %1: *fp16 {name = \"out\"}, "
                            "%2: i32 {name = \"n\"}) num_warps(4) num_stages(2) shared_bytes(0) {\n"
                            "  %3 = local_alloc : !smem<3x8x16xfp16> {name = \"a_buf\"} smem(0, "
                            "768) loc(\"async.tri\":3:5)\n"
                            "  %4 = const 0 : i32\n"
                            "  %5 = const 1 : i32\n"
                            "  %6 = make_range 0, 8 : <8xi32>\n"
                            "  %7 = expand_dims %6 {axis = 1} : <8x1xi32>\n"
                            "  %8 = broadcast %7 : <8x16xi32>\n"
                            "  %9 = const 16 : <8x16xi32>\n"
                            "  %10 = mul %8, %9 : <8x16xi32>\n"
                            "  %11 = make_range 0, 16 : <16xi32>\n"
                            "  %12 = expand_dims %11 {axis = 0} : <1x16xi32>\n"
                            "  %13 = broadcast %12 : <8x16xi32>\n"
                            "  %14 = add %10, %13 : <8x16xi32>\n"
                            "  %15 = splat %2 : <8x16xi32>\n"
                            "  %16 = cmp_lt %14, %15 : <8x16xi1>\n"
                            "  %17 = splat %0 : <8x16x*fp16>\n"
                            "  %18 = addptr %17, %14 : <8x16x*fp16>\n"
                            "  %19 = const 128 : <8x16xi32>\n"
                            "  %20 = addptr %18, %19 : <8x16x*fp16>\n"
                            "  %21 = slot %3, %4 : !smem<8x16xfp16>\n"
                            "  %22 = slot %3, %5 : !smem<8x16xfp16>\n"
                            "  async_copy %21, %18, mask %16 loc(\"async.tri\":10:9)\n"
                            "  async_commit\n"
                            "  async_copy %22, %20 loc(\"async.tri\":11:9)\n"
                            "  @COMMIT2@\n"
                            "  @WAIT1@\n"
                            "  %23 = local_load %21 : <8x16xfp16> loc(\"async.tri\":13:13)\n"
                            "  @WAIT2@\n"
                            "  %24 = local_load %22 : <8x16xfp16> loc(\"async.tri\":15:13)\n"
                            "  %25 = splat %1 : <8x16x*fp16>\n"
                            "  %26 = addptr %25, %14 : <8x16x*fp16>\n"
                            "  %27 = addptr %26, %19 : <8x16x*fp16>\n"
                            "  store %26, %23\n"
                            "  store %27, %24\n"
                            "}\n";

static const char *const copy2_good[] = {"@COMMIT2@", "async_commit",
                                         "@WAIT1@",   "async_wait {pending = 1}",
                                         "@WAIT2@",   "async_wait {pending = 0}"};

static void test_copy_round_trip(StrBuf *err)
{
    Parsed p;
    if (!parse_kernel(&p, subst(copy2, copy2_good, 3))) {
        parsed_free(&p);
        return;
    }
    uint16_t x[256], out[256];
    for (int i = 0; i < 256; i++) {
        x[i] = half_exact((float)(i % 61 - 30) * 0.125f);
        out[i] = 0xffff;
    }
    int n = 100;
    InterpArg args[3] = {arg_ptr(x), arg_ptr(out), arg_int(n)};
    InterpBuffer bufs[2] = {buf_of(x, sizeof x), buf_of(out, sizeof out)};
    /* Two programs: the pipeline's books start afresh in each. */
    CHECK(launch(&p, 2, args, 3, bufs, 2, err), "copy round trip: %s", err->data);
    int bad = 0;
    for (int i = 0; i < 256; i++) {
        float want = i < 128 && i >= n ? 0.0f : ref_half_to_float(x[i]);
        bad += ref_half_to_float(out[i]) != want;
    }
    CHECK(bad == 0, "copy round trip: %d wrong elements", bad);
    CHECK(ref_half_to_float(half_exact(-3.75f)) == -3.75f, "half_exact");

    /* The second copy runs past x when x holds only 200 elements: element 72 = x[200]. */
    for (int i = 0; i < 256; i++)
        out[i] = 0x1234;
    bufs[0] = buf_of(x, 200 * sizeof x[0]);
    CHECK(!launch(&p, 1, args, 3, bufs, 2, err), "an out-of-bounds async_copy ran");
    char want[400];
    snprintf(
        want, sizeof want,
        "async.tri:11: out-of-bounds async_copy in program (0, 0, 0): element 72 "
        "(index [4, 8]) reads address 0x%llx (2 bytes), outside every buffer passed to the launch "
        "(just past the end of the buffer passed as x",
        (unsigned long long)(uintptr_t)(x + 200));
    CHECK(contains(err, want), "out-of-bounds async_copy message:\n%s\nwanted:\n%s", err->data,
          want);
    CHECK(out[0] == 0x1234, "the failed launch stored");
    parsed_free(&p);
}

/* Reading a slot before its copy's group was waited for (or even committed) stops the program. */
static void test_read_before_wait(StrBuf *err)
{
    static const struct {
        const char *commit2, *wait1, *wait2, *message;
    } cases[] = {
        {"async_commit", "async_wait {pending = 1}", "barrier",
         "async.tri:15: local_load reads slot 1 of %a_buf before the async copy into it completed "
         "(missing async_wait), in program (0, 0, 0)"},
        {"async_commit", "async_wait {pending = 2}", "async_wait {pending = 0}",
         "async.tri:13: local_load reads slot 0 of %a_buf before the async copy into it completed "
         "(missing async_wait), in program (0, 0, 0)"},
        {"barrier {fence_async = 1}", "async_wait {pending = 0}", "async_wait {pending = 0}",
         "async.tri:15: local_load reads slot 1 of %a_buf before the async copy into it completed "
         "(missing async_commit and async_wait), in program (0, 0, 0)"},
    };
    uint16_t x[256] = {0}, out[256] = {0};
    InterpArg args[3] = {arg_ptr(x), arg_ptr(out), arg_int(256)};
    InterpBuffer bufs[2] = {buf_of(x, sizeof x), buf_of(out, sizeof out)};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *kv[] = {"@COMMIT2@",    cases[c].commit2, "@WAIT1@",
                            cases[c].wait1, "@WAIT2@",        cases[c].wait2};
        Parsed p;
        if (parse_kernel(&p, subst(copy2, kv, 3))) {
            CHECK(!launch(&p, 1, args, 3, bufs, 2, err), "case %zu: a read before the wait ran", c);
            CHECK(contains(err, cases[c].message), "case %zu:\n%s\nwanted:\n%s", c, err->data,
                  cases[c].message);
        }
        parsed_free(&p);
    }
}

/* ---- wgmma ------------------------------------------------------------------------------------- */

/* a <16x32> into slot 1 of a_buf, b <32x16> into b_buf; r = a@b + (a@b + 0.5) through two
 * chained wgmmas and through two dots on loaded a and b; out[0..256) = wgmma's, out[256..512) =
 * dot's. @P@ is the wgmma_wait's pending count; an async_copy into a's slot follows it. */
static const char mm[] = "kernel @mm(%0: *fp16 {name = \"a\"}, %1: *fp16 {name = \"b\"}, %2: *fp32 "
                         "{name = \"out\"}) num_warps(4) num_stages(2) shared_bytes(0) {\n"
                         "  %3 = local_alloc : !smem<2x16x32xfp16> {name = \"a_buf\"}\n"
                         "  %4 = local_alloc : !smem<1x32x16xfp16> {name = \"b_buf\"}\n"
                         "  %5 = const 0 : i32\n"
                         "  %6 = const 1 : i32\n"
                         "  %7 = make_range 0, 16 : <16xi32>\n"
                         "  %8 = expand_dims %7 {axis = 1} : <16x1xi32>\n"
                         "  %9 = broadcast %8 : <16x32xi32>\n"
                         "  %10 = const 32 : <16x32xi32>\n"
                         "  %11 = mul %9, %10 : <16x32xi32>\n"
                         "  %12 = make_range 0, 32 : <32xi32>\n"
                         "  %13 = expand_dims %12 {axis = 0} : <1x32xi32>\n"
                         "  %14 = broadcast %13 : <16x32xi32>\n"
                         "  %15 = add %11, %14 : <16x32xi32>\n"
                         "  %16 = splat %0 : <16x32x*fp16>\n"
                         "  %17 = addptr %16, %15 : <16x32x*fp16>\n"
                         "  %18 = expand_dims %12 {axis = 1} : <32x1xi32>\n"
                         "  %19 = broadcast %18 : <32x16xi32>\n"
                         "  %20 = const 16 : <32x16xi32>\n"
                         "  %21 = mul %19, %20 : <32x16xi32>\n"
                         "  %22 = expand_dims %7 {axis = 0} : <1x16xi32>\n"
                         "  %23 = broadcast %22 : <32x16xi32>\n"
                         "  %24 = add %21, %23 : <32x16xi32>\n"
                         "  %25 = splat %1 : <32x16x*fp16>\n"
                         "  %26 = addptr %25, %24 : <32x16x*fp16>\n"
                         "  %27 = slot %3, %6 : !smem<16x32xfp16>\n"
                         "  %28 = slot %4, %5 : !smem<32x16xfp16>\n"
                         "  async_copy %27, %17\n"
                         "  async_copy %28, %26\n"
                         "  async_commit\n"
                         "  async_wait {pending = 0}\n"
                         "  barrier {fence_async = 1}\n"
                         "  %29 = const 0.5 : <16x16xfp32>\n"
                         "  %30 = wgmma %27, %28, %29 {allow_tf32 = 0} : <16x16xfp32>\n"
                         "  %31 = wgmma %27, %28, %30 {allow_tf32 = 0} : <16x16xfp32>\n"
                         "  %32 = wgmma_wait %31 {pending = @P@} : <16x16xfp32>\n"
                         "  async_copy %27, %17 loc(\"mm.tri\":22:9)\n"
                         "  %33 = load %17 : <16x32xfp16>\n"
                         "  %34 = load %26 : <32x16xfp16>\n"
                         "  %35 = dot %33, %34, %29 {allow_tf32 = 0} : <16x16xfp32>\n"
                         "  %36 = dot %33, %34, %35 {allow_tf32 = 0} : <16x16xfp32>\n"
                         "  %37 = broadcast %8 : <16x16xi32>\n"
                         "  %38 = const 16 : <16x16xi32>\n"
                         "  %39 = mul %37, %38 : <16x16xi32>\n"
                         "  %40 = broadcast %22 : <16x16xi32>\n"
                         "  %41 = add %39, %40 : <16x16xi32>\n"
                         "  %42 = splat %2 : <16x16x*fp32>\n"
                         "  %43 = addptr %42, %41 : <16x16x*fp32>\n"
                         "  %44 = const 256 : <16x16xi32>\n"
                         "  %45 = addptr %43, %44 : <16x16x*fp32>\n"
                         "  store %43, %32\n"
                         "  store %45, %36\n"
                         "}\n";

static void test_wgmma(StrBuf *err)
{
    uint16_t a[16 * 32], b[32 * 16];
    float af[16 * 32], bf[32 * 16], out[512], ref[256];
    for (int i = 0; i < 16 * 32; i++) {
        af[i] = (float)(i % 7 - 3) * 0.25f;
        bf[i] = (float)(i % 5 - 2) * 0.5f;
        a[i] = half_exact(af[i]);
        b[i] = half_exact(bf[i]);
    }
    /* The reference: fp32 sums in k order, twice (the second accumulating into the first). */
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            float acc = 0.5f;
            for (int pass = 0; pass < 2; pass++)
                for (int k = 0; k < 32; k++)
                    acc += af[m * 32 + k] * bf[k * 16 + n];
            ref[m * 16 + n] = acc;
        }
    InterpArg args[3] = {arg_ptr(a), arg_ptr(b), arg_ptr(out)};
    InterpBuffer bufs[3] = {buf_of(a, sizeof a), buf_of(b, sizeof b), buf_of(out, sizeof out)};

    const char *good[] = {"@P@", "0"};
    Parsed p;
    if (parse_kernel(&p, subst(mm, good, 1))) {
        for (int i = 0; i < 512; i++)
            out[i] = -1;
        CHECK(launch(&p, 1, args, 3, bufs, 3, err), "wgmma: %s", err->data);
        CHECK(memcmp(out, out + 256, 256 * sizeof(float)) == 0, "wgmma and dot differ");
        int bad = 0;
        for (int i = 0; i < 256; i++)
            bad += out[i] != ref[i];
        CHECK(bad == 0, "wgmma: %d elements differ from the reference (out[0] = %g, ref %g)", bad,
              out[0], ref[0]);
    }
    parsed_free(&p);

    /* pending = 1 leaves the second wgmma running: the copy into a's slot must wait for it. */
    const char *early[] = {"@P@", "1"};
    if (parse_kernel(&p, subst(mm, early, 1))) {
        CHECK(!launch(&p, 1, args, 3, bufs, 3, err), "an overwrite of a slot a wgmma reads ran");
        const char *want =
            "mm.tri:22: async_copy overwrites slot 1 of %a_buf while a wgmma that reads it "
            "is still running (missing wgmma_wait), in program (0, 0, 0)";
        CHECK(contains(err, want), "overwrite message:\n%s\nwanted:\n%s", err->data, want);
    }
    parsed_free(&p);

    /* pending = 1 and no copy after it: the store reads the second wgmma's result, which that
     * wait left running (its registers still being written). */
    const char *read_early[] = {"@P@",
                                "1",
                                "  async_copy %27, %17 loc(\"mm.tri\":22:9)\n",
                                "  %99 = const 0 : i32 loc(\"mm.tri\":22:9)\n",
                                "  store %43, %32\n",
                                "  store %43, %32 loc(\"mm.tri\":40:5)\n"};
    if (parse_kernel(&p, subst(mm, read_early, 3))) {
        CHECK(!launch(&p, 1, args, 3, bufs, 3, err), "a read of a running wgmma's result ran");
        const char *want = "mm.tri:40: operand 1 of store is the result of a wgmma no wgmma_wait "
                           "has retired";
        CHECK(contains(err, want), "running-result message:\n%s\nwanted:\n%s", err->data, want);
    }
    parsed_free(&p);
}

/* ---- TMA copies and mbarriers (passes/tma.c) ----------------------------------------------- */

/* Rows 0..7 and 8..15 of a 16-column x through a tensor map whose dim 0 is bounded by n (columns
 * at or past n read 0), into two slots, each on its own mbarrier; read back after the waits. */
static const char tma2[] =
    "kernel @tma2(%0: *fp16 {name = \"x\"}, %1: *fp16 {name = \"out\"}, %2: i32 {name = \"n\"}) "
    "num_warps(4) num_stages(2) shared_bytes(0) tensor_map(fp16, base = 0, dims = [p2, *], "
    "strides = [1, 16], box = [16, 8], swizzle = 32) {\n"
    "  %3 = local_alloc : !smem<2x8x16xfp16> {name = \"a_buf\"} smem(0, 2048) "
    "loc(\"tma.tri\":3:5)\n"
    "  %4 = local_alloc : !smem<2x1xi64> {name = \"bars\"} smem(2048, 16) loc(\"tma.tri\":3:5)\n"
    "  mbar_init %4\n"
    "  %5 = const 0 : i32\n"
    "  %6 = const 1 : i32\n"
    "  %7 = const 8 : i32\n"
    "  %8 = const 1 : i1\n"
    "  %9 = slot %3, %5 : !smem<8x16xfp16>\n"
    "  %10 = slot %3, %6 : !smem<8x16xfp16>\n"
    "  %11 = slot %4, %5 : !smem<1xi64>\n"
    "  %12 = slot %4, %6 : !smem<1xi64>\n"
    "  @EXPECT0@\n"
    "  tma_load %9, %8, %11, %5, %5 {tmap = 0} loc(\"tma.tri\":10:9)\n"
    "  mbar_expect %12, %8 {bytes = 256}\n"
    "  tma_load %10, %8, %12, %5, %7 {tmap = 0} loc(\"tma.tri\":11:9)\n"
    "  @WAIT0@\n"
    "  %13 = local_load %9 : <8x16xfp16> loc(\"tma.tri\":13:13)\n"
    "  mbar_wait %12, %5 loc(\"tma.tri\":14:9)\n"
    "  %14 = local_load %10 : <8x16xfp16> loc(\"tma.tri\":15:13)\n"
    "  mbar_inval %4\n"
    "  %15 = make_range 0, 8 : <8xi32>\n"
    "  %16 = expand_dims %15 {axis = 1} : <8x1xi32>\n"
    "  %17 = broadcast %16 : <8x16xi32>\n"
    "  %18 = const 16 : <8x16xi32>\n"
    "  %19 = mul %17, %18 : <8x16xi32>\n"
    "  %20 = make_range 0, 16 : <16xi32>\n"
    "  %21 = expand_dims %20 {axis = 0} : <1x16xi32>\n"
    "  %22 = broadcast %21 : <8x16xi32>\n"
    "  %23 = add %19, %22 : <8x16xi32>\n"
    "  %24 = splat %1 : <8x16x*fp16>\n"
    "  %25 = addptr %24, %23 : <8x16x*fp16>\n"
    "  %26 = const 128 : <8x16xi32>\n"
    "  %27 = addptr %25, %26 : <8x16x*fp16>\n"
    "  store %25, %13\n"
    "  store %27, %14\n"
    "}\n";

static void test_tma(StrBuf *err)
{
    const char *good[] = {"@EXPECT0@", "mbar_expect %11, %8 {bytes = 256}", "@WAIT0@",
                          "mbar_wait %11, %5 loc(\"tma.tri\":12:9)"};
    Parsed p;
    uint16_t x[256], out[256];
    for (int i = 0; i < 256; i++) {
        x[i] = half_exact((float)(i % 37 - 18) * 0.25f);
        out[i] = 0xffff;
    }
    int n = 10;
    InterpArg args[3] = {arg_ptr(x), arg_ptr(out), arg_int(n)};
    InterpBuffer bufs[2] = {buf_of(x, sizeof x), buf_of(out, sizeof out)};
    if (parse_kernel(&p, subst(tma2, good, 2))) {
        CHECK(launch(&p, 2, args, 3, bufs, 2, err), "tma: %s", err->data);
        int bad = 0;
        for (int i = 0; i < 256; i++)
            bad += ref_half_to_float(out[i]) != (i % 16 < n ? ref_half_to_float(x[i]) : 0.0f);
        CHECK(bad == 0, "tma: %d wrong elements", bad);
    }
    parsed_free(&p);
    /* a read before the wait; a wait for a phase that cannot complete (parity 1, or no arrival) */
    static const struct {
        const char *expect, *wait, *message;
    } cases[] = {
        {"mbar_expect %11, %8 {bytes = 256}", "barrier",
         "tma.tri:13: local_load reads slot 0 of %a_buf before waiting for phase 0 of the "
         "mbarrier its tma_load completes on (missing mbar_wait), in program (0, 0, 0)"},
        {"mbar_expect %11, %8 {bytes = 256}", "mbar_wait %11, %6 loc(\"tma.tri\":12:9)",
         "tma.tri:12: mbar_wait waits for a phase of parity 1 of an mbarrier that has completed 1 "
         "phase (no arrival for the next one): it would wait forever, in program (0, 0, 0)"},
        {"barrier", "mbar_wait %11, %5 loc(\"tma.tri\":12:9)",
         "tma.tri:12: mbar_wait waits for a phase of parity 0 of an mbarrier that has completed 0 "
         "phases (no arrival for the next one): it would wait forever, in program (0, 0, 0)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *kv[] = {"@EXPECT0@", cases[c].expect, "@WAIT0@", cases[c].wait};
        if (parse_kernel(&p, subst(tma2, kv, 2))) {
            CHECK(!launch(&p, 1, args, 3, bufs, 2, err), "tma case %zu ran", c);
            CHECK(contains(err, cases[c].message), "tma case %zu:\n%s\nwanted:\n%s", c, err->data,
                  cases[c].message);
        }
        parsed_free(&p);
    }
}

/* A warp-specialized function's empty mbarrier (passes/warp_specialize.c): the producer's wait
 * for a slot's release finds its phase complete only after the consumers' arrive; without the
 * arrive it would hang on the GPU, and the interpreter says so; so it does when the consumers
 * arrive twice (two phases complete, and the wait for the first one's parity would wait for the
 * third). */
static const char *const ws_empty =
    "kernel @ws(%0: *fp16 {name = \"x\"}) num_warps(4) num_stages(2) shared_bytes(16) "
    "warp_specialize(producer_warps = 4, producer_regs = 40, consumer_regs = 216, max_regs = 128) "
    "{\n"
    "  %1 = local_alloc : !smem<2x1xi64> {name = \"empty\"} smem(0, 16)\n"
    "  mbar_init %1 {arrivals = 4}\n"
    "  %2 = const 0 : i32\n"
    "  %3 = slot %1, %2 : !smem<1xi64>\n"
    "  @ARRIVE@\n"
    "  mbar_wait %3, %2 {partition = producer} loc(\"ws.tri\":5:9)\n"
    "  mbar_inval %1 {partition = consumer}\n"
    "}\n";

static void test_ws_empty(StrBuf *err)
{
    static const struct {
        const char *arrive, *message; /* NULL: it runs */
    } cases[] = {
        {"mbar_arrive %3 {partition = consumer}", NULL},
        {"barrier",
         "ws.tri:5: mbar_wait waits for a phase of parity 0 of an mbarrier that has completed 0 "
         "phases (no arrival for the next one): it would wait forever"},
        {"mbar_arrive %3 {partition = consumer}\n  mbar_arrive %3 {partition = consumer}",
         "ws.tri:5: mbar_wait waits for a phase of parity 0 of an mbarrier that has completed 2 "
         "phases (no arrival for the next one): it would wait forever"},
    };
    uint16_t x[8] = {0};
    InterpArg args[1] = {arg_ptr(x)};
    InterpBuffer bufs[1] = {buf_of(x, sizeof x)};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *kv[] = {"@ARRIVE@", cases[c].arrive};
        Parsed p;
        if (parse_kernel(&p, subst(ws_empty, kv, 1))) {
            bool ok = launch(&p, 1, args, 1, bufs, 1, err);
            if (!cases[c].message)
                CHECK(ok, "ws case %zu: %s", c, err->data);
            else
                CHECK(!ok && contains(err, cases[c].message), "ws case %zu:\n%s\nwanted:\n%s", c,
                      err->data, cases[c].message);
        } else {
            CHECK(false, "ws case %zu does not parse", c);
        }
        parsed_free(&p);
    }
}

int main(void)
{
    StrBuf err = {0};
    test_copy_round_trip(&err);
    test_read_before_wait(&err);
    test_wgmma(&err);
    test_tma(&err);
    test_ws_empty(&err);
    strbuf_free(&err);
    if (test_failures) {
        printf("%d failures\n", test_failures);
        return 1;
    }
    printf("interp_async: ok\n");
    return 0;
}
