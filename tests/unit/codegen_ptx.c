/* codegen_ptx.c: the seed kernels, built with the IR builder (passes_kernels.h), through the
 * passes and codegen to PTX for sm_80 and sm_90a: the PTX must have the expected vector and
 * predicated accesses, and ptxas (when present) must accept it with no spills and no local
 * memory. Independent of the front end. */
#include "../unit/passes_kernels.h"
#include "codegen/codegen.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static const char *ptxas_path(void)
{
    static char buf[512];
    const char *home = getenv("CUDA_HOME");
    snprintf(buf, sizeof buf, "%s/bin/ptxas", home && *home ? home : "/usr/local/cuda");
    return access(buf, X_OK) == 0 ? buf : NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Takes the dots' own scratch away and shrinks shared_bytes to the largest scratch left, so a dot
 * cannot stage its operands and codegen must materialize them in dot-operand registers. */
static bool force_materialized_dot;

static int64_t max_scratch(IrRegion *r)
{
    int64_t m = 0;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (op->code == OP_DOT) {
            op->smem_bytes = 0;
            op->scratch = (IrScratch){0}; /* and its record: operands from their registers */
        }
        if (op->smem_offset + op->smem_bytes > m)
            m = op->smem_offset + op->smem_bytes;
        for (int k = 0; k < op->nregions; k++) {
            int64_t n = max_scratch(&op->regions[k]);
            if (n > m)
                m = n;
        }
    }
    return m;
}

/* Compiles f for sm (arch_specific: the "a" form); returns the PTX (malloc'd) or NULL. */
static char *compile(IrFunc *f, int sm, bool arch_specific, double *ms)
{
    Diag d = {.echo = true};
    PassOptions po = {.num_warps = f->num_warps, .num_stages = 1, .sm = sm};
    double t0 = now_ms();
    if (!passes_run(f, &po, &d)) {
        diag_free(&d);
        return NULL;
    }
    if (force_materialized_dot)
        f->shared_bytes = (int)max_scratch(&f->body);
    if (getenv("CODEGEN_TEST_DUMP")) {
        StrBuf ir = {0};
        ir_print(&ir, f);
        printf("%s\n", ir.data);
        strbuf_free(&ir);
    }
    CodegenOptions co = {.sm = sm, .arch_specific = arch_specific, .opt_level = 3};
    StrBuf ptx = {0};
    bool ok = codegen_emit(f, &co, NULL, &ptx, &d);
    if (ms)
        *ms = now_ms() - t0;
    diag_free(&d);
    if (!ok) {
        strbuf_free(&ptx);
        return NULL;
    }
    return strbuf_take(&ptx);
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* Runs ptxas -v on the PTX; returns its stderr (malloc'd) or NULL when ptxas failed. */
static char *ptxas(const char *ptx, const char *arch, const char *tag)
{
    const char *exe = ptxas_path();
    if (!exe)
        return strdup("");
    char in[400], err[420], cmd[1400];
    snprintf(in, sizeof in, "%s/codegen_ptx_%s_%s.ptx", TRIC_BINARY_DIR, tag, arch);
    snprintf(err, sizeof err, "%s.log", in);
    FILE *fp = fopen(in, "w");
    if (!fp)
        return NULL;
    fputs(ptx, fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, "%s -v -arch=%s %s -o /dev/null 2> %s", exe, arch, in, err);
    int rc = system(cmd);
    fp = fopen(err, "r");
    StrBuf log = {0};
    char line[512];
    while (fp && fgets(line, sizeof line, fp))
        strbuf_append(&log, line);
    if (fp)
        fclose(fp);
    if (rc != 0) {
        printf("ptxas -arch=%s failed on %s:\n%s\n", arch, in, log.data ? log.data : "");
        strbuf_free(&log);
        return NULL;
    }
    return log.data ? strbuf_take(&log) : strdup("");
}

static const char *arch_name(int sm, bool a) { return sm == 80 ? "sm_80" : a ? "sm_90a" : "sm_90"; }

/* ptxas -v must accept it; with no_spills, no spill stores/loads and no stack frame. */
static void check_ptxas(const char *ptx, const char *arch, const char *tag, bool no_spills)
{
    char *log = ptxas(ptx, arch, tag);
    CHECK(log, "%s: ptxas -arch=%s rejected the PTX", tag, arch);
    if (log && no_spills && *log) {
        CHECK(strstr(log, "0 bytes spill stores") && strstr(log, "0 bytes spill loads"),
              "%s: spills on %s:\n%s", tag, arch, log);
        CHECK(strstr(log, "0 bytes stack frame"), "%s: local memory on %s:\n%s", tag, arch, log);
    }
    free(log);
}

static const int sms[2] = {80, 90};

static void test_vector_add(void)
{
    for (int hinted = 0; hinted < 2; hinted++)
        for (int a = 0; a < 2; a++) {
            Arena *arena = arena_new();
            IrFunc *f = pk_vector_add(arena, 1024, hinted ? 16 : 1, hinted ? 16 : 1, 4);
            double ms = 0;
            char *ptx = compile(f, sms[a], a == 1, &ms);
            CHECK(ptx, "vector_add (hinted %d) did not compile", hinted);
            if (ptx) {
                CHECK(strstr(ptx, ".entry vector_add_kernel"), "no .entry");
                CHECK(strstr(ptx, ".maxntid 128"), "no .maxntid 128");
                CHECK(strstr(ptx, "setp."), "the mask is no predicate");
                if (hinted) {
                    /* 1024 elements, 128 threads, 4 per access: 2 x ld.v4 per input, 2 x st.v4. */
                    CHECK(count(ptx, "ld.global.v4.b32") == 4, "expected 4 ld.global.v4.b32:\n%s",
                          ptx);
                    CHECK(count(ptx, "st.global.v4.b32") == 2, "expected 2 st.global.v4.b32:\n%s",
                          ptx);
                } else {
                    CHECK(!strstr(ptx, ".v4"), "unhinted vector_add must not vectorize:\n%s", ptx);
                    CHECK(count(ptx, "ld.global.b32") == 16, "expected 16 scalar loads:\n%s", ptx);
                }
                check_ptxas(ptx, arch_name(sms[a], a == 1),
                            hinted ? "vector_add_hinted" : "vector_add", true);
                printf("vector_add (hinted %d) %s: %.1f ms\n", hinted, arch_name(sms[a], a == 1),
                       ms);
            }
            free(ptx);
            arena_free(arena);
        }
}

static void test_matmul(int BM, int BN, int BK, int warps)
{
    for (int a = 0; a < 2; a++) {
        Arena *arena = arena_new();
        IrFunc *f = pk_matmul(arena, BM, BN, BK, warps);
        double ms = 0;
        char *ptx = compile(f, sms[a], a == 1, &ms);
        CHECK(ptx, "matmul %dx%dx%d did not compile", BM, BN, BK);
        if (ptx) {
            CHECK(strstr(ptx, "fma.rn.f32"), "the FMA dot has no fma.rn.f32");
            /* Staged by the dot: a k loop (one FMA per accumulator register in its body);
             * materialized: fully unrolled, BK FMAs per accumulator register. */
            int fmas = count(ptx, "fma.rn.f32"), acc = BM * BN / (32 * warps);
            if (force_materialized_dot)
                CHECK(fmas == acc * BK, "materialized dot: %d FMAs, expected %d", fmas, acc * BK);
            else
                CHECK(fmas < acc * BK, "staged dot: %d FMAs, expected a loop", fmas);
            CHECK(strstr(ptx, "bar.sync"), "no barrier around the shared-memory operands");
            char tag[64];
            snprintf(tag, sizeof tag, "matmul_%d_%d_%d", BM, BN, BK);
            check_ptxas(ptx, arch_name(sms[a], a == 1), tag, true);
            printf("matmul %dx%dx%d %s: %.1f ms\n", BM, BN, BK, arch_name(sms[a], a == 1), ms);
        }
        free(ptx);
        arena_free(arena);
    }
}

int main(void)
{
    if (!ptxas_path())
        printf("note: no ptxas; PTX is checked by text only\n");
    test_vector_add();
    test_matmul(64, 64, 32, 4);
    force_materialized_dot = true;
    test_matmul(16, 16, 64, 4);
    force_materialized_dot = false;
    if (test_failures) {
        printf("%d failure(s)\n", test_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
