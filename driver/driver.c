/* driver.c: the compiler as one straight list of calls (QBE's main.c style):
 *
 *   parse_module -> sema_specialize -> lower_kernel -> passes_run -> codegen_emit
 *
 * plus the PTX metadata block that lets a runtime launch a .ptx with nothing else. A `.tir` input
 * is tile IR text and enters the list at the passes. */
#include "driver/driver.h"

#include "codegen/codegen.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

bool driver_parse_arch(const char *arch, int *sm, bool *arch_specific)
{
    static const struct {
        const char *name;
        int sm;
        bool specific;
    } arches[] = {
        {"sm_80", 80, false}, {"sm_86", 86, false}, {"sm_89", 89, false},
        {"sm_90", 90, false}, {"sm_90a", 90, true},
    };
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++) {
        if (!strcmp(arch, arches[i].name)) {
            *sm = arches[i].sm;
            *arch_specific = arches[i].specific;
            return true;
        }
    }
    return false;
}

/* ---- the PTX metadata block (docs/ptx-metadata.md) ------------------------------------------- */

static void param_sig(StrBuf *out, const KernelParamMeta *p)
{
    if (p->type.is_ptr)
        strbuf_putc(out, '*');
    strbuf_append(out, dtype_sig_name(p->type.dtype));
    if (p->equal_to_1)
        strbuf_append(out, ":1");
    else if (p->divisibility > 1)
        strbuf_printf(out, ":%d", p->divisibility);
}

void kernel_meta_write(StrBuf *out, const KernelMeta *m, const char *constexprs)
{
    strbuf_append(out, "// tric.begin\n");
    strbuf_printf(out, "// tric.version %s\n", TRIC_VERSION);
    strbuf_printf(out, "// tric.kernel %s\n", m->name);
    strbuf_printf(out, "// tric.target %s\n", m->target);
    strbuf_printf(out, "// tric.num_warps %d\n", m->num_warps);
    strbuf_printf(out, "// tric.threads %d\n", m->threads);
    strbuf_printf(out, "// tric.shared %d\n", m->shared_bytes);
    strbuf_append(out, "// tric.params");
    for (int i = 0; i < m->nparams; i++) {
        strbuf_putc(out, ' ');
        param_sig(out, &m->params[i]);
    }
    strbuf_putc(out, '\n');
    if (constexprs && *constexprs)
        strbuf_printf(out, "// tric.constexpr %s\n", constexprs);
    strbuf_append(out, "// tric.end\n");
}

/* Parses one "*fp16:16" / "i32" entry. */
static bool parse_param_sig(const char *s, size_t n, KernelParamMeta *p)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *name = buf;
    p->type = (Type){0};
    p->divisibility = 1;
    if (*name == '*') {
        p->type.is_ptr = true;
        name++;
    }
    char *colon = strchr(name, ':');
    if (colon) {
        *colon = 0;
        char *end;
        long d = strtol(colon + 1, &end, 10);
        if (*end || d < 1)
            return false;
        p->divisibility = (int)d;
        p->equal_to_1 = d == 1;
    }
    return dtype_from_name(name, &p->type.dtype);
}

bool kernel_meta_read(const char *ptx, KernelMeta *m, StrBuf *error)
{
    memset(m, 0, sizeof *m);
    const char *begin = strstr(ptx, "// tric.begin\n");
    const char *end = begin ? strstr(begin, "// tric.end") : NULL;
    if (!begin || !end) {
        strbuf_append(error, "no tric metadata block (// tric.begin ... // tric.end) in the PTX; "
                             "was it written by tric?");
        return false;
    }
    bool seen_kernel = false, seen_threads = false;
    for (const char *line = begin; line < end;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char key[32] = {0};
        int off = 0;
        if (sscanf(line, "// tric.%31s %n", key, &off) == 1 && off > 0) {
            const char *val = line + off;
            size_t vlen = len - (size_t)off;
            if (!strcmp(key, "kernel") && vlen > 0 && vlen < sizeof m->name) {
                memcpy(m->name, val, vlen);
                seen_kernel = true;
            } else if (!strcmp(key, "target") && vlen < sizeof m->target) {
                memcpy(m->target, val, vlen);
            } else if (!strcmp(key, "num_warps")) {
                m->num_warps = atoi(val);
            } else if (!strcmp(key, "threads")) {
                m->threads = atoi(val);
                seen_threads = true;
            } else if (!strcmp(key, "shared")) {
                m->shared_bytes = atoi(val);
            } else if (!strcmp(key, "params")) {
                const char *p = val, *stop = val + vlen;
                while (p < stop) {
                    while (p < stop && *p == ' ')
                        p++;
                    const char *q = p;
                    while (q < stop && *q != ' ')
                        q++;
                    if (q == p)
                        break;
                    if (m->nparams == (int)(sizeof m->params / sizeof m->params[0]) ||
                        !parse_param_sig(p, (size_t)(q - p), &m->params[m->nparams])) {
                        strbuf_printf(error, "bad parameter '%.*s' in the tric metadata block",
                                      (int)(q - p), p);
                        return false;
                    }
                    m->nparams++;
                    p = q;
                }
            }
        }
        line = nl ? nl + 1 : line + len;
    }
    if (!seen_kernel || !seen_threads || m->threads <= 0 || m->threads > 1024 ||
        m->shared_bytes < 0) {
        strbuf_append(error, "the tric metadata block lacks the kernel name or a valid thread count");
        return false;
    }
    return true;
}

/* ---- the pipeline ------------------------------------------------------------------------------ */

/* Debug builds (the sanitizer CI build among them) verify the IR after every pass; release builds
 * only with --verify. */
#ifdef NDEBUG
enum { VERIFY_EVERY_PASS = 0 };
#else
enum { VERIFY_EVERY_PASS = 1 };
#endif

/* Runs "all" or a comma-separated list of pass names (passes_list), each verified and dumped as
 * the options say. */
static bool run_passes(IrFunc *f, const char *list, const PassOptions *po, Diag *diag)
{
    if (!strcmp(list, "all"))
        return passes_run(f, po, diag);
    passes_prepare(f, po);
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        bool found = false;
        for (int i = 0; i < passes_count; i++) {
            if (strlen(passes_list[i].name) == n && !strncmp(p, passes_list[i].name, n)) {
                found = true;
                if (!passes_run_one(f, po, diag, i))
                    return false;
            }
        }
        if (!found) {
            diag_plain_error(diag, "unknown pass '%.*s' (passes: all, canonicalize, cse, dce, "
                                   "axis_info, layouts, pipeline, swizzle, shared_alloc)", (int)n, p);
            return false;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* The constexpr values a kernel was specialized with, "A=1 B=tl.float16", for the metadata. */
static char *constexpr_summary(const Kernel *k)
{
    StrBuf sb = {0};
    for (int i = 0; k && i < k->func->nparams; i++) {
        const Param *p = &k->func->params[i];
        if (!p->is_constexpr)
            continue;
        if (sb.len)
            strbuf_putc(&sb, ' ');
        strbuf_printf(&sb, "%s=", p->name);
        const_print(&sb, &p->sem.cv);
    }
    return strbuf_take(&sb);
}

bool driver_compile(const SrcFile *file, const CompileOptions *opt, CompileResult *out, Diag *diag)
{
    memset(out, 0, sizeof *out);
    out->arena = arena_new();
    Arena *arena = out->arena;

    int sm = 90;
    bool arch_specific = false;
    const char *arch = opt->arch ? opt->arch : "sm_90";
    if (!driver_parse_arch(arch, &sm, &arch_specific)) {
        diag_plain_error(diag, "unknown --arch '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a)", arch);
        return false;
    }
    int num_warps = opt->num_warps ? opt->num_warps : 4;
    if (num_warps < 1 || num_warps > 32 || (num_warps & (num_warps - 1))) {
        diag_plain_error(diag, "--num-warps must be a power of two from 1 to 32, got %d", num_warps);
        return false;
    }

    IrFunc *ir = NULL;
    const Kernel *kernel = NULL;
    if (ends_with(file->name, ".tir")) {
        ir = ir_parse(file, arena, diag);
        if (!ir || !ir_verify(ir, "parse", diag))
            return false;
        if (opt->emit == EMIT_AST) {
            diag_plain_error(diag, "--emit=ast needs a .tri source file, not tile IR");
            return false;
        }
    } else {
        /* 1. syntax */
        Module *m = parse_module(file, arena, diag);
        if (!m)
            return false;
        if (opt->parse_only) {
            ast_print_module(&out->output, m);
            return true;
        }
        /* 2. types, constexprs, inlining */
        Kernel *k = sema_specialize(m, &opt->spec, arena, diag);
        if (!k)
            return false;
        kernel = k;
        if (opt->emit == EMIT_AST) {
            ast_print_func(&out->output, k->func);
            return true;
        }
        /* 3. tile IR */
        ir = lower_kernel(k, arena, diag);
        if (!ir)
            return false;
        if (!ir_verify(ir, "lowering", diag))
            return false;
    }
    ir->num_warps = opt->num_warps ? num_warps : (ir->num_warps ? ir->num_warps : 4);
    if (opt->num_stages)
        ir->num_stages = opt->num_stages;
    /* The interpreter runs the IR as lowered; the GPU path continues from the same IR. */
    out->ir = ir;

    PassOptions po = {
        .num_warps = ir->num_warps,
        .num_stages = ir->num_stages,
        .sm = sm,
        .verify = opt->verify || VERIFY_EVERY_PASS,
        .dump_after = opt->dump_after,
        /* fp16/bf16 dots on sm >= 80 use the tensor cores: mma.sync, or wgmma when the target is
         * sm_90a (compile for sm_90 to get mma.sync on Hopper). Everything that changes the code
         * is in the options, so the runtime's cache key covers it. */
        .mma = true,
        .wgmma = true,
        .arch_specific = arch_specific,
    };
    if (opt->emit == EMIT_IR) {
        IrFunc *shown = ir;
        if (opt->passes) {
            shown = ir_func_clone(ir, arena);
            if (!run_passes(shown, opt->passes, &po, diag))
                return false;
        }
        ir_print(&out->output, shown);
        return true;
    }

    /* 4. passes on a copy, so out->ir stays the lowered IR */
    IrFunc *gpu = ir_func_clone(ir, arena);
    if (!run_passes(gpu, "all", &po, diag))
        return false;

    /* 5. LLVM and PTX */
    CodegenOptions co = {
        .sm = sm,
        .arch_specific = arch_specific,
        .opt_level = opt->opt_level >= 0 && opt->opt_level <= 3 ? opt->opt_level : 3,
        .libdevice_path = opt->libdevice_path,
    };
    StrBuf ptx = {0};
    bool ok = codegen_emit(gpu, &co, opt->emit == EMIT_LLVM ? &out->output : NULL,
                           opt->emit == EMIT_PTX ? &ptx : NULL, diag);
    if (!ok) {
        strbuf_free(&ptx);
        return false;
    }

    KernelMeta *meta = &out->meta;
    snprintf(meta->name, sizeof meta->name, "%s", gpu->name);
    snprintf(meta->target, sizeof meta->target, "%s", arch);
    meta->num_warps = gpu->num_warps;
    meta->threads = 32 * gpu->num_warps;
    meta->shared_bytes = gpu->shared_bytes;
    if (gpu->nparams > (int)(sizeof meta->params / sizeof meta->params[0])) {
        diag_plain_error(diag, "kernel '%s' has %d parameters; tric supports at most %d", gpu->name,
                         gpu->nparams, (int)(sizeof meta->params / sizeof meta->params[0]));
        strbuf_free(&ptx);
        return false;
    }
    meta->nparams = gpu->nparams;
    for (int i = 0; i < gpu->nparams; i++) {
        meta->params[i].type = type_elem(ir_type(gpu, gpu->params[i].value));
        meta->params[i].divisibility = gpu->params[i].divisibility > 1 ? gpu->params[i].divisibility : 1;
        meta->params[i].equal_to_1 = gpu->params[i].equal_to_1;
    }
    if (opt->emit == EMIT_PTX) {
        char *constexprs = constexpr_summary(kernel);
        kernel_meta_write(&out->output, meta, constexprs);
        free(constexprs);
        strbuf_append_n(&out->output, ptx.data ? ptx.data : "", ptx.len);
    }
    strbuf_free(&ptx);
    return true;
}

void compile_result_free(CompileResult *r)
{
    strbuf_free(&r->output);
    arena_free(r->arena);
    memset(r, 0, sizeof *r);
}
