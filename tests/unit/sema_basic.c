/* sema_basic: -D values, signature entries, and sema on the seed kernels and on small bad kernels
 * (parse_module + sema_specialize, without the CLI). */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    *len = got;
    return buf;
}

static void test_const_from_string(void)
{
    Arena *a = arena_new();
    ConstVal cv;
    CHECK(const_from_string("1024", &cv, a) && cv.kind == CV_INT && cv.i == 1024, "1024");
    CHECK(const_from_string("-3", &cv, a) && cv.kind == CV_INT && cv.i == -3, "-3");
    CHECK(const_from_string("0x10", &cv, a) && cv.kind == CV_INT && cv.i == 16, "0x10");
    CHECK(const_from_string("1.5", &cv, a) && cv.kind == CV_FLOAT && cv.f == 1.5, "1.5");
    CHECK(const_from_string("1e-3", &cv, a) && cv.kind == CV_FLOAT, "1e-3");
    CHECK(const_from_string("True", &cv, a) && cv.kind == CV_BOOL && cv.b, "True");
    CHECK(const_from_string("False", &cv, a) && cv.kind == CV_BOOL && !cv.b, "False");
    CHECK(const_from_string("None", &cv, a) && cv.kind == CV_NONE, "None");
    const char *f16[] = {"tl.float16", "float16", "fp16", "triton.language.float16"};
    for (int i = 0; i < 4; i++)
        CHECK(const_from_string(f16[i], &cv, a) && cv.kind == CV_DTYPE && cv.dtype == DT_F16, "%s",
              f16[i]);
    CHECK(!const_from_string("abc", &cv, a), "abc rejected");
    CHECK(!const_from_string("", &cv, a), "empty rejected");
    CHECK(!const_from_string("99999999999999999999", &cv, a), "overflow rejected");
    StrBuf sb = {0};
    ConstVal t[2] = {{.kind = CV_INT, .i = 2}, {.kind = CV_FLOAT, .f = 1.0}};
    ConstVal tup = {.kind = CV_TUPLE, .tuple = {t, 2}};
    const_print(&sb, &tup);
    CHECK(!strcmp(sb.data, "(2, 1.0)"), "const_print tuple: %s", sb.data);
    strbuf_clear(&sb);
    ConstVal d = {.kind = CV_DTYPE, .dtype = DT_BF16};
    const_print(&sb, &d);
    CHECK(!strcmp(sb.data, "tl.bfloat16"), "const_print dtype: %s", sb.data);
    strbuf_free(&sb);
    arena_free(a);
}

static void test_signature(void)
{
    Arena *a = arena_new();
    SigEntry *e;
    int n = signature_split(" *fp16:16, i32 ,i32:1,1024", &e, a);
    CHECK(n == 4, "4 entries, got %d", n);
    CHECK(n == 4 && !strcmp(e[1].text, "i32") && !strcmp(e[3].text, "1024"), "trimmed entries");
    Type t;
    int div;
    bool eq1;
    CHECK(!signature_parse_type("*fp16:16", &t, &div, &eq1, a) && t.is_ptr && t.dtype == DT_F16 &&
              div == 16 && !eq1,
          "*fp16:16");
    CHECK(!signature_parse_type("i32:1", &t, &div, &eq1, a) && !t.is_ptr && t.dtype == DT_I32 &&
              eq1,
          "i32:1");
    CHECK(!signature_parse_type("* bf16", &t, &div, &eq1, a) && t.is_ptr && t.dtype == DT_BF16,
          "* bf16");
    CHECK(signature_parse_type("f33", &t, &div, &eq1, a) != NULL, "f33 rejected");
    CHECK(!signature_parse_type("i32:8", &t, &div, &eq1, a) && div == 8 && !eq1, "i32:8");
    CHECK(!signature_parse_type("*fp16:4", &t, &div, &eq1, a) && t.is_ptr && div == 4, "*fp16:4");
    CHECK(signature_parse_type("i32:32", &t, &div, &eq1, a) != NULL, "i32:32 rejected");
    CHECK(signature_parse_type("i32:12", &t, &div, &eq1, a) != NULL, "i32:12 rejected");
    CHECK(signature_parse_type("fp32:4", &t, &div, &eq1, a) != NULL, "fp32:4 rejected");
    CHECK(signature_parse_type("*fp32:1", &t, &div, &eq1, a) != NULL, "*fp32:1 rejected");
    arena_free(a);
}

typedef struct Result {
    Kernel *k;
    char *diag;
    Arena *arena;
} Result;

static Result compile(const char *name, const char *src, const char *kernel, const char *sig,
                      const char *defs)
{
    Result r = {0};
    r.arena = arena_new();
    /* In the arena: the AST's SrcLocs point at it after compile returns (lowering reports them). */
    SrcFile *file = arena_alloc(r.arena, sizeof *file);
    *file = (SrcFile){.name = name, .text = src, .len = strlen(src)};
    Diag d = {0};
    Module *m = parse_module(file, NULL, r.arena, &d);
    if (m) {
        Define defines[16];
        int nd = 0;
        char *copy = defs ? strdup(defs) : NULL;
        for (char *tok = copy ? strtok(copy, " ") : NULL; tok && nd < 16; tok = strtok(NULL, " ")) {
            char *eq = strchr(tok, '=');
            if (!eq)
                continue;
            *eq = 0;
            defines[nd++] = (Define){arena_strdup(r.arena, tok), arena_strdup(r.arena, eq + 1)};
        }
        free(copy);
        SpecOptions opt = {
            .kernel_name = kernel, .signature = sig, .defines = defines, .ndefines = nd};
        r.k = sema_specialize(m, &opt, r.arena, &d);
    }
    r.diag = strdup(d.text.data ? d.text.data : "");
    diag_free(&d);
    return r;
}

static void done(Result *r)
{
    free(r->diag);
    arena_free(r->arena);
}

static const Stmt *find_assign(const Block *b, const char *name)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        if (st->kind == ST_ASSIGN && st->assign.ntargets == 1 &&
            st->assign.targets[0]->kind == EX_NAME && !strcmp(st->assign.targets[0]->str, name))
            return st;
    }
    return NULL;
}

static const char *sem_type(Arena *a, const Expr *e)
{
    if (e->sem.kind != SEM_VALUE)
        return "(not a value)";
    return type_str(a, e->sem.type);
}

static void test_examples(void)
{
    size_t len;
    char *src = read_file(TRIC_SOURCE_DIR "/examples/vector_add.tri", &len);
    CHECK(src, "read vector_add.tri");
    if (!src)
        return;
    Result r =
        compile("vector_add.tri", src, NULL, "*fp32:16,*fp32:16,*fp32:16,i32", "BLOCK_SIZE=1024");
    CHECK(r.k, "vector_add compiles: %s", r.diag);
    if (r.k) {
        CHECK(r.k->nargs == 4, "4 run-time args");
        CHECK(r.k->args[0]->divisibility == 16, "x_ptr divisible by 16");
        const Stmt *st = find_assign(&r.k->func->body, "output");
        CHECK(st && !strcmp(sem_type(r.arena, st->assign.value), "<1024xfp32>"), "output type %s",
              st ? sem_type(r.arena, st->assign.value) : "?");
        st = find_assign(&r.k->func->body, "mask");
        CHECK(st && !strcmp(sem_type(r.arena, st->assign.value), "<1024xi1>"), "mask type %s",
              st ? sem_type(r.arena, st->assign.value) : "?");
    }
    done(&r);
    r = compile("vector_add.tri", src, NULL, "*fp32,*fp32,*fp32,i32,1024", NULL);
    CHECK(r.k, "vector_add with a full signature: %s", r.diag);
    done(&r);
    r = compile("vector_add.tri", src, NULL, "*fp32,*fp32,i32", "BLOCK_SIZE=1024");
    CHECK(strstr(r.diag, "signature has 3 entries but kernel 'vector_add_kernel' has 4 run-time "
                         "parameters (x_ptr, y_ptr, output_ptr, n_elements)"),
          "count error: %s", r.diag);
    done(&r);
    r = compile("vector_add.tri", src, NULL, "*fp32,*fp32,*fp32,i32", NULL);
    CHECK(strstr(r.diag, "constexpr parameter 'BLOCK_SIZE' has no value: pass -D BLOCK_SIZE=..."),
          "missing constexpr: %s", r.diag);
    done(&r);
    free(src);

    src = read_file(TRIC_SOURCE_DIR "/examples/matmul.tri", &len);
    CHECK(src, "read matmul.tri");
    if (!src)
        return;
    const char *sig = "*fp16,*fp16,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32";
    r = compile("matmul.tri", src, "matmul_kernel", sig,
                "BLOCK_SIZE_M=64 BLOCK_SIZE_N=64 BLOCK_SIZE_K=32");
    CHECK(r.k, "matmul_kernel compiles: %s", r.diag);
    done(&r);
    for (int g = 0; g < 2; g++) {
        r = compile("matmul.tri", src, "kernel_matmul",
                    "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
                    g ? "BLOCK_SIZE_M=128 BLOCK_SIZE_N=128 BLOCK_SIZE_K=32 GROUP_SIZE_M=8 "
                        "T_C=tl.float16 T_ACC=tl.float32"
                      : "BLOCK_SIZE_M=128 BLOCK_SIZE_N=128 BLOCK_SIZE_K=32 GROUP_SIZE_M=0 "
                        "T_C=tl.float16 T_ACC=tl.float32");
        CHECK(r.k, "kernel_matmul GROUP_SIZE_M=%d compiles: %s", g ? 8 : 0, r.diag);
        if (r.k) {
            const Block *b = &r.k->func->body;
            const Stmt *ifs = NULL;
            for (int i = 0; i < b->n; i++)
                if (b->stmts[i]->kind == ST_IF)
                    ifs = b->stmts[i];
            CHECK(ifs && ifs->if_.static_taken == (g ? 0 : 1), "constexpr if decided");
            const Stmt *c = find_assign(b, "c");
            CHECK(c && !strcmp(sem_type(r.arena, c->assign.value), "<128x128xfp16>"), "c type %s",
                  c ? sem_type(r.arena, c->assign.value) : "?");
        }
        done(&r);
    }
    /* ":1" specializes an int to the constant 1; it stays a run-time argument of the launch. */
    r = compile(
        "matmul.tri", src, "kernel_matmul",
        "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
        "BLOCK_SIZE_M=64 BLOCK_SIZE_N=64 BLOCK_SIZE_K=32 GROUP_SIZE_M=8 T_C=fp16 T_ACC=fp32");
    CHECK(r.k && r.k->nargs == 12, "kernel_matmul with :1 hints: %s", r.diag);
    if (r.k) {
        Param *ak = r.k->args[7];
        CHECK(!strcmp(ak->name, "stride_ak") && ak->equal_to_1 && ak->sem.kind == SEM_CONST &&
                  ak->sem.cv.i == 1 && !ak->is_constexpr,
              "stride_ak equal to 1");
        CHECK(r.k->args[6]->divisibility == 16 && r.k->args[0]->divisibility == 16, "div 16");
    }
    done(&r);
    r = compile("matmul.tri", src, NULL, NULL, NULL);
    CHECK(strstr(r.diag, "matmul.tri: error: matmul.tri has several @triton.jit kernels "
                         "(matmul_kernel, kernel_matmul): pick one with --kernel=NAME"),
          "several kernels: %s", r.diag);
    done(&r);
    free(src);
}

/* Small kernels that must fail with one exact message. */
static void test_errors(void)
{
    static const struct {
        const char *src, *sig, *defs, *expect;
    } cases[] = {
        {"@triton.jit\ndef k(p):\n    x = tl.program_id(0, 1)\n", "*fp32", NULL,
         "t.tri:3:12: error: program_id() takes 1 argument but 2 were given"},
        {"@triton.jit\ndef k(p):\n    x = foo + 1\n", "*fp32", NULL,
         "t.tri:3:9: error: name 'foo' is not defined"},
        {"@triton.jit\ndef k(p):\n    x = tl.load(p, maks=1)\n", "*fp32", NULL,
         "t.tri:3:20: error: load() got an unexpected keyword argument 'maks'"},
        {"@triton.jit\ndef k(p):\n    x = tl.arange(0, 100)\n", "*fp32", NULL,
         "error: arange's range must be a power of two, got 100"},
        {"@triton.jit\ndef k(p, n):\n    x = tl.arange(0, n)\n", "*fp32,i32", NULL,
         "error: arange's end must be a constexpr int, got a run-time i32"},
        {"@triton.jit\ndef k(p):\n    for i in range(3):\n        break\n", "*fp32", NULL,
         "t.tri:4:9: error: 'break' is not supported in tric kernels (as in Triton)"},
        {"@triton.jit\ndef k(p):\n    a = tl.zeros((64, 32), dtype=tl.float32)\n"
         "    b = tl.zeros((32, 64), dtype=tl.float32)\n    c = a + b\n",
         "*fp32", NULL, "error: cannot broadcast <64x32> and <32x64>: dimension 1 is 32 vs 64"},
        {"@triton.jit\ndef k(x_ptr):\n    pass\n", NULL, NULL,
         "t.tri:2:7: error: parameter 'x_ptr' has no type: annotate it (x_ptr: \"*fp32\") or pass "
         "--signature"},
        {"@triton.jit\ndef k(x_ptr: \"*fp32:16\", n: tl.int32, B: tl.constexpr):\n"
         "    o = tl.arange(0, B)\n    tl.store(x_ptr + o, o.to(tl.float32), mask=o < n)\n",
         NULL, "B=128", ""},
        {"@triton.jit\ndef h(n):\n    return n + 1, n * 2\n\n@triton.jit\ndef k(p: \"*fp32\", "
         "n: \"i32\"):\n    a, b = h(n)\n    tl.store(p, (a + b).to(tl.float32))\n",
         NULL, NULL, ""},
        {"@triton.jit\ndef k(p):\n    pass\n", "*fp32", "FOO=1",
         "error: -D FOO: kernel 'k' has no constexpr parameter 'FOO' (its constexprs: none)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Result r = compile("t.tri", cases[i].src, NULL, cases[i].sig, cases[i].defs);
        if (!*cases[i].expect)
            CHECK(r.k && !*r.diag, "case %zu should compile: %s", i, r.diag);
        else
            CHECK(!r.k && strstr(r.diag, cases[i].expect), "case %zu: expected '%s', got:\n%s", i,
                  cases[i].expect, r.diag);
        done(&r);
    }
}

/* What sema did not type is a bug in tric by the time build_ir sees it: build_ir reports an
 * internal error naming the .tri position, never a user-facing message of its own. */
static void test_lower_untyped(void)
{
    const char *src = "@triton.jit\ndef k(p: \"*fp32\", n: \"i32\"):\n    x = n + 1\n"
                      "    tl.store(p, x.to(tl.float32))\n";
    Result r = compile("t.tri", src, NULL, NULL, NULL);
    CHECK(r.k && !*r.diag, "the kernel should compile: %s", r.diag);
    if (r.k) {
        const Stmt *st = find_assign(&r.k->func->body, "x");
        CHECK(st && st->assign.value->kind == EX_BINARY, "x = n + 1 found");
        Diag d = {0};
        CHECK(build_ir(r.k, r.arena, &d) && d.errors == 0, "typed: builds");
        diag_free(&d);
        if (st) {
            st->assign.value->sem = (Sem){.kind = SEM_UNSET};
            d = (Diag){0};
            CHECK(!build_ir(r.k, r.arena, &d), "untyped: no IR");
            const char *text = d.text.data ? d.text.data : "";
            CHECK(strstr(text, "tric: internal error at ") &&
                      strstr(text, "operator '+' reached IR building without a run-time type "
                                   "(building the IR of t.tri:3:") &&
                      strstr(text, "(this is a bug in tric, not in your kernel)"),
                  "untyped: internal error, got:\n%s", text);
            diag_free(&d);
        }
    }
    done(&r);
}

int main(void)
{
    test_const_from_string();
    test_signature();
    test_examples();
    test_errors();
    test_lower_untyped();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("sema_basic: all passed\n");
    return 0;
}
