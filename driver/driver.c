/* driver.c: the compiler as one straight list of calls (QBE's main.c style):
 *
 *   parse_module -> sema_specialize -> build_ir -> passes_run -> codegen_emit
 *
 * A `.tir` input is tile IR text and enters the list at the passes. The PTX metadata block that
 * lets a runtime launch a .ptx with nothing else is written and read in meta.c. */
#include "driver/driver.h"

#include "codegen/codegen.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TRIC_SOURCE_REVISION
#define TRIC_SOURCE_REVISION "unknown" /* not configured by CMake from a git checkout */
#endif

const char *driver_build_id(void) { return TRIC_VERSION " (git " TRIC_SOURCE_REVISION ")"; }

void driver_codegen_identity(StrBuf *out) { codegen_identity(out); }

const char *driver_libdevice_path(const char *override, char *buf, size_t size)
{
    const char *home = getenv("CUDA_HOME");
    if (!override && home && *home) {
        snprintf(buf, size, "%s/nvvm/libdevice/libdevice.10.bc", home);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return codegen_libdevice_path(override, buf, size);
}

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static const char *env_text(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void driver_env_switches(CompileOptions *out)
{
    out->no_tma = env_on("TRIC_NO_TMA");
    out->remarks = env_on("TRIC_PIPELINE_REMARKS");
    out->codegen_times = env_on("TRIC_CODEGEN_TIMES");
    out->llvm_passes = env_text("TRIC_LLVM_PIPELINE");
    out->llvm_args = env_text("TRIC_LLVM_ARGS");
}

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

/* ---- the pass list ----------------------------------------------------------------------------- */

/* Debug builds (the sanitizer CI build among them) verify the IR after every pass; release builds
 * only with --verify. */
#ifdef NDEBUG
enum { VERIFY_EVERY_PASS = 0 };
#else
enum { VERIFY_EVERY_PASS = 1 };
#endif

void driver_pass_names(StrBuf *out, const char *sep)
{
    for (int i = 0; i < passes_count; i++)
        strbuf_printf(out, "%s%s", i ? sep : "", passes_list[i].name);
}

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
            /* The names from the pass list itself, so that a new pass is never left out. */
            StrBuf names = {0};
            strbuf_append(&names, "all, ");
            driver_pass_names(&names, ", ");
            diag_plain_error(diag, "unknown pass '%.*s' (passes: %s)", (int)n, p, names.data);
            strbuf_free(&names);
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

/* What a launch needs of a compiled kernel (gpu: after the passes). */
static bool fill_meta(KernelMeta *meta, const IrFunc *gpu, const char *arch, const Kernel *kernel,
                      Diag *diag)
{
    memset(meta, 0, sizeof *meta);
    snprintf(meta->name, sizeof meta->name, "%s", gpu->name);
    snprintf(meta->target, sizeof meta->target, "%s", arch);
    meta->num_warps = gpu->num_warps;
    meta->threads = ir_func_threads(gpu); /* a producer warpgroup and consumer groups too */
    meta->shared_bytes = gpu->shared_bytes;
    if (gpu->nparams > (int)(sizeof meta->params / sizeof meta->params[0])) {
        diag_plain_error(diag, "kernel '%s' has %d parameters; tric supports at most %d", gpu->name,
                         gpu->nparams, (int)(sizeof meta->params / sizeof meta->params[0]));
        return false;
    }
    meta->nparams = gpu->nparams;
    for (int i = 0; i < gpu->nparams; i++) {
        meta->params[i].type = type_elem(ir_type(gpu, gpu->params[i].value));
        meta->params[i].divisibility =
            gpu->params[i].divisibility > 1 ? gpu->params[i].divisibility : 1;
        meta->params[i].equal_to_1 = gpu->params[i].equal_to_1;
        if (gpu->params[i].name)
            snprintf(meta->params[i].name, sizeof meta->params[i].name, "%s", gpu->params[i].name);
    }
    if (gpu->ntmaps > TRIC_MAX_TENSOR_MAPS) {
        diag_plain_error(diag, "kernel '%s' reads %d tensor maps; tric supports at most %d",
                         gpu->name, gpu->ntmaps, TRIC_MAX_TENSOR_MAPS);
        return false;
    }
    meta->ntmaps = gpu->ntmaps;
    for (int i = 0; i < gpu->ntmaps; i++)
        meta->tmaps[i] = gpu->tmaps[i];
    meta->persistent = gpu->persistent.on;
    meta->persistent_axes = ir_func_grid_axes(gpu);
    /* a kernel that reads no workspace (a grid made persistent) gets none: its launch allocates
     * nothing, so even its first can be captured into a graph */
    static const OpCode workspace[] = {OP_WORKSPACE};
    meta->workspace_bytes =
        ir_region_find(&gpu->body, workspace, 1) ? gpu->persistent.workspace_bytes : -1;
    char *constexprs = constexpr_summary(kernel);
    snprintf(meta->constexprs, sizeof meta->constexprs, "%s", constexprs ? constexprs : "");
    free(constexprs);
    return true;
}

/* The passes on a copy of ir at po's num_stages, the copy in *out (it holds stages_overflow when
 * they fail). */
static bool passes_at(IrFunc *ir, const PassOptions *po, IrFunc **out, Arena *arena, Diag *diag)
{
    IrFunc *gpu = *out = ir_func_clone(ir, arena);
    gpu->num_stages = po->num_stages;
    return run_passes(gpu, "all", po, diag);
}

/* Whether the persistent pass made gpu persistent unasked (attention's grid, where its loop over
 * tiles was to get a producer warpgroup) and warp_specialize then gave it none: without the
 * producer, or where the grid holds two programs an SM with one, the grid as written runs faster
 * (docs/passes.md "persistent"). */
static bool made_persistent_alone(const PassOptions *po, const IrFunc *gpu)
{
    return !po->persistent && !po->no_auto_persistent && gpu->persistent.from_grid &&
           gpu->ws.producer_warps == 0;
}

/* The passes on a copy of ir. When fit_stages is set and the pipeline's stage buffers overflow
 * shared memory, the stage count is lowered until they fit (*lowered_from says from what; 0 when
 * not lowered) instead of failing: an autotune config written for a GPU with more shared memory
 * still gets its kernel. deep (--deep-pipeline): the stage count is then raised, one at a time up
 * to twice what was asked, while the kernel still compiles (the last that did is kept;
 * *raised_from says from what, 0 when nothing was raised: no loop is pipelined at the function's
 * stage count, or one stage more does not fit). A launch that runs one program an SM has the
 * shared memory a second program would have used; deeper, its loads run further ahead. */
static IrFunc *gpu_passes(IrFunc *ir, const PassOptions *po_in, bool fit_stages, bool deep,
                          int *lowered_from, int *raised_from, Arena *arena, Diag *diag)
{
    PassOptions po = *po_in;
    *lowered_from = *raised_from = 0;
    IrFunc *gpu;
    for (;;) {
        Diag attempt = {.max_errors = diag->max_errors};
        bool ok = passes_at(ir, &po, &gpu, arena, &attempt);
        if (!ok && fit_stages && gpu->stages_overflow > 0 && po.num_stages > 1) {
            if (!*lowered_from)
                *lowered_from = po.num_stages;
            po.num_stages--;
            diag_free(&attempt);
            continue;
        }
        if (ok && made_persistent_alone(&po, gpu)) {
            po.no_auto_persistent = true; /* as written, then */
            diag_free(&attempt);
            continue;
        }
        diag_merge(diag, &attempt);
        diag_free(&attempt);
        if (!ok)
            return NULL;
        break;
    }
    if (!deep || *lowered_from || gpu->default_stage_loops == 0)
        return gpu;
    int asked = po.num_stages;
    po.dump_after = NULL; /* --dump-ir-after shows the passes at the stage count asked */
    for (int stages = asked + 1; stages <= 2 * asked; stages++) {
        Diag quiet = {.max_errors = diag->max_errors};
        IrFunc *deeper;
        po.num_stages = stages;
        bool ok = passes_at(ir, &po, &deeper, arena, &quiet);
        diag_free(&quiet);
        if (!ok || made_persistent_alone(&po, deeper))
            break;
        gpu = deeper;
        *raised_from = asked;
    }
    return gpu;
}

/* The stage count a kernel was compiled with, in its metadata, when it is not the one asked. */
static void meta_stages(KernelMeta *meta, const IrFunc *gpu, int lowered_from, int raised_from)
{
    if (!lowered_from && !raised_from)
        return;
    meta->num_stages = gpu->num_stages;
    meta->stages_lowered_from = lowered_from;
    meta->stages_raised_from = raised_from;
}

/* ---- autotuned kernels ------------------------------------------------------------------------ */

static const Define *find_define(const SpecOptions *spec, const char *name)
{
    for (int i = spec->ndefines - 1; i >= 0; i--)
        if (!strcmp(spec->defines[i].name, name))
            return &spec->defines[i];
    return NULL;
}

/* The constexpr parameters of f (a function of m; constexprs as sema decides them, with no
 * default) that have no -D value, as "A, B" in *missing; true when there are none. */
static bool every_constexpr_given(const Module *m, const FuncDef *f, const SpecOptions *spec,
                                  StrBuf *missing, Arena *a)
{
    bool *is_constexpr = arena_alloc(a, (size_t)(f->nparams ? f->nparams : 1) * sizeof(bool));
    sema_constexpr_params(m, f, is_constexpr, a);
    for (int i = 0; i < f->nparams; i++) {
        const Param *p = &f->params[i];
        if (is_constexpr[i] && !p->default_value && !find_define(spec, p->name))
            strbuf_printf(missing, "%s%s", missing->len ? ", " : "", p->name);
    }
    return missing->len == 0;
}

/* The message of d's first error, after its "file:line:col: error: " (warnings before it, such
 * as prune_configs_by's, are skipped). */
static const char *first_error_message(const Diag *d, Arena *a)
{
    const char *t = d->text.data ? d->text.data : "";
    const char *e = strstr(t, ": error: ");
    if (e)
        t = e + strlen(": error: ");
    return arena_strndup(a, t, strcspn(t, "\n"));
}

/* Triton's tutorials and libraries build their config lists in host Python (a helper with an
 * `if is_cuda():`, a comprehension over block sizes, FlagGems' runtime.get_tuned_config(...)),
 * which tric does not run. A compile that gives every constexpr with -D needs no config, so such
 * a decorator is then set aside with a warning, and the kernel compiles as given. */
static bool read_or_set_aside(const Module *m, const FuncDef *f, const SpecOptions *spec,
                              Autotune *at, Arena *a, Diag *d)
{
    Diag attempt = {.max_errors = d->max_errors};
    SpecOptions with_readers = *spec;
    with_readers.host_env = driver_host_env(&spec->host_env);
    if (autotune_read(m, f, &with_readers, at, a, &attempt)) {
        diag_merge(d, &attempt);
        diag_free(&attempt);
        return true;
    }
    if (!at->configs_unevaluated) {
        diag_merge(d, &attempt);
        diag_free(&attempt);
        return false;
    }
    StrBuf missing = {0};
    bool given = every_constexpr_given(m, f, spec, &missing, a);
    if (given) {
        diag_warning(d, at->loc,
                     "autotune: configs not read (%s); every constexpr of %s has a -D "
                     "value, so it compiles untuned with them",
                     first_error_message(&attempt, a), f->name);
        memset(at, 0, sizeof *at);
    } else {
        diag_merge(d, &attempt);
        diag_note(d, at->loc,
                  "to compile %s without these configs, give its constexprs with -D "
                  "(%s)",
                  f->name, missing.data);
    }
    strbuf_free(&missing);
    diag_free(&attempt);
    return given;
}

bool driver_tune_configs(const Module *m, const SpecOptions *spec, Autotune *out, Arena *a, Diag *d)
{
    memset(out, 0, sizeof *out);
    /* A kernel that cannot be found is sema's error to report, once. */
    Diag quiet = {0};
    const FuncDef *f = sema_find_kernel(m, spec->kernel_name, a, &quiet);
    diag_free(&quiet);
    Autotune at;
    if (!f || !read_or_set_aside(m, f, spec, &at, a, d))
        return f == NULL;
    bool all_given = true;
    for (int i = 0; i < at.nconfigs; i++)
        for (int k = 0; k < at.configs[i].ndefines; k++)
            all_given &= find_define(spec, at.configs[i].defines[k].name) != NULL;
    if (at.nconfigs == 0 || all_given)
        return true;
    *out = at;
    out->nconfigs = 0;
    for (int i = 0; i < at.nconfigs; i++) {
        const TuneConfig *c = &at.configs[i];
        bool agrees = true;
        for (int k = 0; k < c->ndefines; k++) {
            const Define *given = find_define(spec, c->defines[k].name);
            agrees &= !given || !strcmp(given->value, c->defines[k].value);
        }
        if (agrees)
            out->configs[out->nconfigs++] = *c;
    }
    if (out->nconfigs == 0) {
        diag_error(d, at.loc,
                   "autotune: none of the %d configs agrees with the -D values given "
                   "for the names they set",
                   at.nconfigs);
        return false;
    }
    return true;
}

SpecOptions driver_config_spec(const SpecOptions *spec, const TuneConfig *c, Arena *a)
{
    SpecOptions out = *spec;
    Define *defs = arena_alloc(a, sizeof(Define) * (size_t)(spec->ndefines + c->ndefines + 1));
    int n = 0;
    for (int i = 0; i < spec->ndefines; i++) {
        bool replaced = false;
        for (int k = 0; k < c->ndefines; k++)
            replaced |= !strcmp(spec->defines[i].name, c->defines[k].name);
        if (!replaced)
            defs[n++] = spec->defines[i];
    }
    for (int k = 0; k < c->ndefines; k++)
        defs[n++] = c->defines[k];
    out.defines = defs;
    out.ndefines = n;
    return out;
}

/* --emit=ast/ir show one kernel: say how to pick a config when the tuned names have no value. */
static void tuned_note(const Module *m, const SpecOptions *spec, const Autotune *at, Diag *diag)
{
    (void)m;
    StrBuf text = {0};
    autotune_config_text(&text, &at->configs[0]);
    diag_note(diag, at->loc,
              "%s is autotuned over %d configs; --emit=ptx/llvm compiles them all, "
              "--emit=ast/ir shows one: pass its values with -D (the first: %s)",
              spec->kernel_name ? spec->kernel_name : "the kernel", at->nconfigs,
              text.data ? text.data : "");
    strbuf_free(&text);
}

/* The first line of a diagnostic's text (its location and message, without the source line). */
static char *first_line(const Diag *d, Arena *a)
{
    const char *t = d->text.data ? d->text.data : "(no message)";
    return arena_strndup(a, t, strcspn(t, "\n"));
}

/* Kernels compiled into one module: an autotuned kernel's configs, a file's kernels. */
typedef struct KernelSet {
    IrFunc **gpus;
    KernelMeta *metas;
    int n, cap;
} KernelSet;

/* A slot for one more kernel; its meta is zeroed. NULL when out of memory. */
static KernelMeta *set_push(KernelSet *set, IrFunc *gpu)
{
    if (set->n == set->cap) {
        int cap = set->cap ? 2 * set->cap : 16;
        IrFunc **g = realloc(set->gpus, sizeof *g * (size_t)cap);
        if (g)
            set->gpus = g;
        KernelMeta *m = g ? realloc(set->metas, sizeof *m * (size_t)cap) : NULL;
        if (!m)
            return NULL;
        set->metas = m;
        set->cap = cap;
    }
    set->gpus[set->n] = gpu;
    memset(&set->metas[set->n], 0, sizeof set->metas[set->n]);
    return &set->metas[set->n++];
}

/* What code generation takes from the compile options. The libdevice file is found here, where
 * the environment may be read ($CUDA_HOME), and handed down; arena holds its path. */
static CodegenOptions codegen_options(const CompileOptions *opt, int sm, bool arch_specific,
                                      Arena *arena)
{
    char buf[4096];
    const char *libdevice = opt->libdevice_path;
    if (!libdevice) {
        libdevice = driver_libdevice_path(NULL, buf, sizeof buf);
        libdevice = libdevice ? arena_strdup(arena, libdevice) : NULL;
    }
    CodegenOptions co = {
        .sm = sm,
        .arch_specific = arch_specific,
        .opt_level = opt->opt_level >= 0 && opt->opt_level <= 3 ? opt->opt_level : 3,
        .libdevice_path = libdevice,
        .no_fp_fusion = opt->no_fp_fusion,
        .llvm_passes = opt->llvm_passes,
        .llvm_args = opt->llvm_args,
        .codegen_times = opt->codegen_times,
    };
    return co;
}

static void set_free(KernelSet *set)
{
    free(set->gpus);
    free(set->metas);
}

/* One PTX (or LLVM module) holding every kernel of the set, each with its metadata block. */
static bool set_emit(const KernelSet *set, const CompileOptions *opt, int sm, bool arch_specific,
                     CompileResult *out, Diag *diag)
{
    CodegenOptions co = codegen_options(opt, sm, arch_specific, out->arena);
    StrBuf ptx = {0};
    bool ok = codegen_emit_many((const IrFunc *const *)set->gpus, set->n, &co,
                                opt->emit == EMIT_LLVM ? &out->output : NULL,
                                opt->emit == EMIT_PTX ? &ptx : NULL, diag);
    if (ok && opt->emit == EMIT_PTX) {
        for (int i = 0; i < set->n; i++)
            kernel_meta_write(&out->output, &set->metas[i]);
        strbuf_append_n(&out->output, ptx.data ? ptx.data : "", ptx.len);
    }
    if (ok)
        out->meta = set->metas[0];
    strbuf_free(&ptx);
    return ok;
}

/* The passes' options for ir (its warps and stages already settled) on target sm. fp16/bf16 dots
 * on sm >= 80 use the tensor cores: mma.sync, or wgmma when the target is sm_90a (compile for
 * sm_90 to get mma.sync on Hopper). Everything that changes the code is in the options, so the
 * runtime's cache key covers it. */
static PassOptions pass_options(const CompileOptions *opt, const IrFunc *ir, int sm,
                                bool arch_specific)
{
    return (PassOptions){.num_warps = ir->num_warps,
                         .num_stages = ir->num_stages,
                         .sm = sm,
                         .verify = opt->verify || VERIFY_EVERY_PASS,
                         .dump_after = opt->dump_after,
                         .mma = true,
                         .wgmma = true,
                         .arch_specific = arch_specific,
                         .no_tma = opt->no_tma,
                         .no_heavy_first = opt->no_heavy_first,
                         .no_fuse_loops = opt->no_fuse_loops,
                         .no_auto_ws = opt->no_auto_ws,
                         .pingpong = opt->pingpong,
                         .tma_store = opt->tma_store,
                         .stream_k = opt->stream_k,
                         .persistent = opt->persistent,
                         .no_auto_persistent = opt->no_auto_persistent,
                         .overlap_dots = opt->overlap_dots,
                         .remarks = opt->remarks};
}

/* Sema, lowering and the passes for one kernel as spec says: the IR after the passes, or NULL
 * with diagnostics in d. fit_stages and opt->deep_pipeline: see gpu_passes. */
static IrFunc *kernel_gpu_ir(const Module *m, const CompileOptions *opt, const SpecOptions *spec,
                             int num_warps, int num_stages, bool fit_stages, int sm,
                             bool arch_specific, Arena *arena, Diag *d, Kernel **kernel,
                             int *lowered_from, int *raised_from)
{
    *lowered_from = *raised_from = 0;
    Kernel *k = *kernel = sema_specialize(m, spec, arena, d);
    IrFunc *ir = k ? build_ir(k, arena, d) : NULL;
    if (!ir || !ir_verify(ir, "lowering", d))
        return NULL;
    ir->num_warps = num_warps ? num_warps : ir->num_warps ? ir->num_warps : 4;
    if (num_stages)
        ir->num_stages = num_stages;
    PassOptions po = pass_options(opt, ir, sm, arch_specific);
    return gpu_passes(ir, &po, fit_stages, opt->deep_pipeline, lowered_from, raised_from, arena, d);
}

/* An autotuned kernel without values for its configs' names: one kernel per config into set
 * (config i's kernel is named NAME_c<i>), each with its metadata, which names the config and the
 * tuning (key, restore_value, reset_to_zero). A config that does not compile (shared memory
 * beyond the limit even with one stage, say) is left out with a note; none left is an error
 * listing each -- or, when all fail alike (a missing signature), that error once. */
static bool compile_tuned(const Module *m, const CompileOptions *opt, const SpecOptions *base,
                          const Autotune *at, const char *arch, int sm, bool arch_specific,
                          KernelSet *set, Arena *arena, Diag *diag)
{
    StrBuf reasons = {0}, names = {0};
    const char *tune_name = NULL;
    /* --stream-k=auto, --deep-pipeline=auto: config f n + i is config i in form forms[f] */
    ConfigForm forms[DRIVER_MAX_FORMS];
    int n = at->nconfigs,
        total = n * driver_config_forms(opt->stream_k_twins, opt->deep_pipeline_twins, forms);
    const char **left_out = arena_alloc(arena, sizeof(char *) * (size_t)(total + 1));
    const char *first_failure = NULL;
    Diag first_diag = {0};
    bool same_failure = true;
    int first = set->n;
    for (int i = 0; i < total; i++) {
        const TuneConfig *c = &at->configs[i % n];
        ConfigForm form = forms[i / n];
        bool twin = form != FORM_AS_WRITTEN;
        StrBuf text = {0};
        autotune_config_text(&text, c);
        strbuf_append(&text, driver_form_suffix(form));
        const char *ctext = arena_strdup(arena, text.data ? text.data : "");
        strbuf_free(&text);
        SpecOptions spec = driver_config_spec(base, c, arena);
        Diag cd = {.max_errors = diag->max_errors};
        Kernel *k = NULL;
        int lowered_from = 0, raised_from = 0;
        CompileOptions copt = *opt;
        if (opt->stream_k_twins)
            copt.stream_k = form & FORM_STREAM_K;
        if (opt->deep_pipeline_twins)
            copt.deep_pipeline = form & FORM_DEEP_PIPELINE;
        IrFunc *gpu = kernel_gpu_ir(m, &copt, &spec, c->num_warps ? c->num_warps : opt->num_warps,
                                    c->num_stages ? c->num_stages : opt->num_stages, true, sm,
                                    arch_specific, arena, &cd, &k, &lowered_from, &raised_from);
        /* a twin a switch left as written is the same kernel as the config it was applied to */
        if (gpu && (form & FORM_STREAM_K) && !gpu->persistent.on)
            left_out[i] = arena_printf(arena, "stream_k left it as written, as config %d", i % n);
        else if (gpu && (form & FORM_DEEP_PIPELINE) && !raised_from)
            left_out[i] = arena_printf(arena, "deep_pipeline left its num_stages, as config %d",
                                       driver_form_base(forms, n, i));
        if (gpu && left_out[i]) {
            diag_free(&cd);
            continue;
        }
        KernelMeta meta;
        if (gpu) {
            if (!tune_name)
                tune_name = arena_strdup(arena, gpu->name);
            char name[160];
            snprintf(name, sizeof name, "%s_c%d", tune_name, i);
            gpu->name = arena_strdup(arena, name);
            gpu = fill_meta(&meta, gpu, arch, k, &cd) ? gpu : NULL;
        }
        if (!gpu) {
            const char *why = first_line(&cd, arena);
            strbuf_printf(&reasons, "\n  config %d (%s): %s", i, ctext, why);
            if (!first_failure) {
                first_failure = why;
                first_diag = cd;
                cd = (Diag){0};
            }
            same_failure &= !strcmp(why, first_failure);
            left_out[i] = why;
            diag_free(&cd);
            continue;
        }
        if (opt->remarks) /* asked for: each config's remarks (the pipeline's, the tma pass's) */
            diag_merge(diag, &cd);
        diag_free(&cd);
        snprintf(meta.config, sizeof meta.config, "%s", ctext);
        /* Say so where the user looks (a note) and where the runtime does (the metadata). */
        if (lowered_from && !twin)
            diag_note(diag, c->loc,
                      "config %d (%s): num_stages=%d needs more shared memory than "
                      "%s has; compiled with num_stages=%d",
                      i, ctext, lowered_from, arch, gpu->num_stages);
        meta_stages(&meta, gpu, lowered_from, raised_from);
        KernelMeta *slot = set_push(set, gpu);
        if (!slot) {
            diag_plain_error(diag, "out of memory");
            break;
        }
        *slot = meta;
    }
    bool ok = set->n > first;
    if (!ok && same_failure && total > 1) {
        diag_merge(diag, &first_diag);
    } else if (!ok) {
        diag_error(diag, at->loc, "autotune: none of the %d configs compiles:%s", total,
                   reasons.data ? reasons.data : "");
    } else {
        for (int i = 0; i < total; i++) {
            if (!left_out[i])
                continue;
            StrBuf text = {0};
            autotune_config_text(&text, &at->configs[i % n]);
            diag_note(diag, at->configs[i % n].loc, "config %d (%s%s) left out: %s", i,
                      text.data ? text.data : "", driver_form_suffix(forms[i / n]), left_out[i]);
            strbuf_free(&text);
        }
    }
    /* The tuning facts every config's block repeats, so any one block is enough to read. */
    for (int j = 0; ok && j < 3; j++) {
        const char **list = j == 0 ? at->key : j == 1 ? at->restore_value : at->reset_to_zero;
        int len = j == 0 ? at->nkey : j == 1 ? at->nrestore : at->nreset;
        strbuf_clear(&names);
        for (int i = 0; i < len; i++)
            strbuf_printf(&names, "%s%s", i ? "," : "", list[i]);
        for (int i = first; i < set->n; i++) {
            KernelMeta *meta = &set->metas[i];
            char *field = j == 0 ? meta->tune_key : j == 1 ? meta->tune_restore : meta->tune_reset;
            size_t cap = j == 0   ? sizeof meta->tune_key
                         : j == 1 ? sizeof meta->tune_restore
                                  : sizeof meta->tune_reset;
            snprintf(field, cap, "%s", names.data ? names.data : "");
            snprintf(meta->tune_name, sizeof meta->tune_name, "%s", tune_name);
        }
    }
    strbuf_free(&reasons);
    strbuf_free(&names);
    diag_free(&first_diag);
    return ok;
}

/* spec for kernel f of a file compiled whole: the -D values that name one of f's parameters. */
static SpecOptions kernel_spec(const SpecOptions *spec, const FuncDef *f, Arena *a)
{
    SpecOptions out = *spec;
    out.kernel_name = f->name;
    Define *defs = arena_alloc(a, sizeof(Define) * (size_t)(spec->ndefines + 1));
    out.ndefines = 0;
    for (int i = 0; i < spec->ndefines; i++)
        for (int p = 0; p < f->nparams; p++)
            if (!strcmp(f->params[p].name, spec->defines[i].name)) {
                defs[out.ndefines++] = spec->defines[i];
                break;
            }
    out.defines = defs;
    return out;
}

/* A file with several kernels and no --kernel: every kernel (an autotuned one as its configs) in
 * one module. Each kernel takes the -D values naming its parameters; one naming no parameter of
 * any kernel is an error, and so is --signature (it describes one kernel). */
static bool compile_file_kernels(const Module *m, const FuncDef **entries, int nentries,
                                 const CompileOptions *opt, const char *arch, int sm,
                                 bool arch_specific, CompileResult *out, Diag *diag)
{
    Arena *arena = out->arena;
    StrBuf list = {0};
    for (int i = 0; i < nentries; i++)
        strbuf_printf(&list, "%s%s", i ? ", " : "", entries[i]->name);
    bool ok = true;
    if (opt->spec.signature) {
        diag_plain_error(diag,
                         "%s has several @triton.jit kernels (%s): %s describes "
                         "one; pick it with %s, or annotate the parameters",
                         m->file->name, list.data, spec_signature_name(&opt->spec),
                         opt->spec.from_c_api ? "opt.kernel" : "--kernel=NAME");
        ok = false;
    }
    for (int i = 0; ok && i < opt->spec.ndefines; i++) {
        bool used = false;
        for (int k = 0; k < nentries && !used; k++)
            for (int p = 0; p < entries[k]->nparams && !used; p++)
                used = !strcmp(entries[k]->params[p].name, opt->spec.defines[i].name);
        if (!used) {
            diag_plain_error(diag, "%s: no kernel of %s (%s) has a parameter '%s'",
                             spec_define_given(&opt->spec, &opt->spec.defines[i], false, arena),
                             m->file->name, list.data, opt->spec.defines[i].name);
            ok = false;
        }
    }
    strbuf_free(&list);
    KernelSet set = {0};
    for (int i = 0; ok && i < nentries; i++) {
        SpecOptions spec = kernel_spec(&opt->spec, entries[i], arena);
        Autotune at;
        ok = driver_tune_configs(m, &spec, &at, arena, diag);
        if (ok && at.nconfigs > 0) {
            ok = compile_tuned(m, opt, &spec, &at, arch, sm, arch_specific, &set, arena, diag);
            continue;
        }
        Kernel *k = NULL;
        int lowered_from = 0, raised_from = 0;
        IrFunc *gpu =
            ok ? kernel_gpu_ir(m, opt, &spec, opt->num_warps, opt->num_stages, opt->fit_stages, sm,
                               arch_specific, arena, diag, &k, &lowered_from, &raised_from)
               : NULL;
        KernelMeta *meta = gpu ? set_push(&set, gpu) : NULL;
        ok = meta && fill_meta(meta, gpu, arch, k, diag);
        if (ok)
            meta_stages(meta, gpu, lowered_from, raised_from);
    }
    if (ok)
        ok = set_emit(&set, opt, sm, arch_specific, out, diag);
    set_free(&set);
    return ok;
}

static bool compile_body(const SrcFile *file, const CompileOptions *opt, CompileResult *out,
                         Diag *diag);

/* The compile, checked for memory that ran out on the way (support.h: an allocation that fails
 * is counted, never fatal): a result built from dropped text or after a failed allocation is
 * not handed out. */
bool driver_compile(const SrcFile *file, const CompileOptions *opt, CompileResult *out, Diag *diag)
{
    unsigned long failures = support_alloc_failures();
    bool ok = compile_body(file, opt, out, diag);
    if (support_alloc_failures() != failures) {
        compile_result_free(out);
        diag_plain_error(diag, "out of memory while compiling %s", file->name);
        return false;
    }
    return ok;
}

/* --arch and --num-warps, checked: the target's sm, whether it is the arch-specific one
 * (sm_90a), and the warps per program (4 unless given). */
static bool check_target(const CompileOptions *opt, const char **arch, int *sm, bool *arch_specific,
                         int *num_warps, Diag *diag)
{
    *sm = 90;
    *arch_specific = false;
    *arch = opt->arch ? opt->arch : "sm_90";
    if (!driver_parse_arch(*arch, sm, arch_specific)) {
        diag_plain_error(diag, "unknown --arch '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a)", *arch);
        return false;
    }
    *num_warps = opt->num_warps ? opt->num_warps : 4;
    if (*num_warps < 1 || *num_warps > 32 || (*num_warps & (*num_warps - 1))) {
        diag_plain_error(diag, "--num-warps must be a power of two from 1 to 32, got %d",
                         *num_warps);
        return false;
    }
    return true;
}

/* How far the front end took the input: it failed; it finished the output (--parse-only,
 * --emit=ast, an autotuned kernel or every kernel of a file to PTX); or it made tile IR for the
 * rest of the list. */
typedef enum { FRONT_FAILED, FRONT_DONE, FRONT_IR } FrontEnd;

/* A .tri file's kernels compiled whole when it has several and no --kernel, or when its kernel
 * is autotuned (every config); FRONT_IR when neither, for the one kernel to go on. */
static FrontEnd compile_tuned_or_many(const Module *m, const CompileOptions *opt, const char *arch,
                                      int sm, bool arch_specific, CompileResult *out, Diag *diag)
{
    Arena *arena = out->arena;
    bool whole = opt->emit == EMIT_PTX || opt->emit == EMIT_LLVM;
    if (!opt->no_tune && whole && !opt->spec.kernel_name) {
        const FuncDef **entries;
        int n = sema_entry_kernels(m, &entries, arena);
        if (n > 1)
            return compile_file_kernels(m, entries, n, opt, arch, sm, arch_specific, out, diag)
                       ? FRONT_DONE
                       : FRONT_FAILED;
    }
    if (!opt->no_tune) {
        Autotune at;
        if (!driver_tune_configs(m, &opt->spec, &at, arena, diag))
            return FRONT_FAILED;
        if (at.nconfigs > 0 && whole) {
            KernelSet set = {0};
            bool ok = compile_tuned(m, opt, &opt->spec, &at, arch, sm, arch_specific, &set, arena,
                                    diag) &&
                      set_emit(&set, opt, sm, arch_specific, out, diag);
            set_free(&set);
            return ok ? FRONT_DONE : FRONT_FAILED;
        }
        if (at.nconfigs > 0)
            tuned_note(m, &opt->spec, &at, diag);
    }
    return FRONT_IR;
}

/* Steps 1 to 3 of the list for a .tri file (a .tir file is parsed as tile IR and verified):
 * syntax, sema, lowering to tile IR (*ir, verified; *kernel the specialized kernel). */
static FrontEnd front_end(const SrcFile *file, const CompileOptions *opt, const char *arch, int sm,
                          bool arch_specific, CompileResult *out, Diag *diag, IrFunc **ir,
                          const Kernel **kernel)
{
    Arena *arena = out->arena;
    if (ends_with(file->name, ".tir")) {
        *ir = ir_parse(file, arena, diag);
        if (!*ir || !ir_verify(*ir, "parse", diag))
            return FRONT_FAILED;
        if (opt->emit == EMIT_AST) {
            diag_plain_error(diag, "--emit=ast needs a .tri source file, not tile IR");
            return FRONT_FAILED;
        }
        return FRONT_IR;
    }
    /* 1. syntax */
    Module *m = driver_parse(file, opt, arena, diag);
    if (!m)
        return FRONT_FAILED;
    if (opt->parse_only) {
        ast_print_module(&out->output, m);
        return FRONT_DONE;
    }
    FrontEnd tuned = compile_tuned_or_many(m, opt, arch, sm, arch_specific, out, diag);
    if (tuned != FRONT_IR)
        return tuned;
    /* 2. types, constexprs, inlining */
    Kernel *k = sema_specialize(m, &opt->spec, arena, diag);
    if (!k)
        return FRONT_FAILED;
    *kernel = k;
    if (opt->emit == EMIT_AST) {
        ast_print_func(&out->output, k->func);
        return FRONT_DONE;
    }
    /* 3. tile IR */
    *ir = build_ir(k, arena, diag);
    if (!*ir)
        return FRONT_FAILED;
    if (!ir_verify(*ir, "lowering", diag))
        return FRONT_FAILED;
    return FRONT_IR;
}

/* --emit=ir: the lowered IR, or with --passes the IR after those passes (on a copy). */
static bool emit_ir(IrFunc *ir, const Kernel *kernel, const CompileOptions *opt,
                    const PassOptions *po, CompileResult *out, Diag *diag)
{
    /* Every constexpr's value (heuristics' included) for the cpu device's
     * tric_kernel_constexpr, as the PTX metadata carries them. */
    if (kernel) {
        char *cx = constexpr_summary(kernel);
        snprintf(out->meta.constexprs, sizeof out->meta.constexprs, "%s", cx ? cx : "");
        free(cx);
    }
    IrFunc *shown = ir;
    if (opt->passes && !strcmp(opt->passes, "all")) {
        /* the stage count the PTX would get (--deep-pipeline's, a config's fitted one) */
        int lowered_from, raised_from;
        shown = gpu_passes(ir, po, opt->fit_stages, opt->deep_pipeline, &lowered_from, &raised_from,
                           out->arena, diag);
        if (!shown)
            return false;
    } else if (opt->passes) {
        shown = ir_func_clone(ir, out->arena);
        if (!run_passes(shown, opt->passes, po, diag))
            return false;
    }
    ir_print(&out->output, shown);
    return true;
}

/* Steps 4 and 5 of the list: the passes on a copy (so out->ir stays the lowered IR), then LLVM
 * IR or PTX with its metadata block. */
static bool emit_gpu(IrFunc *ir, const Kernel *kernel, const CompileOptions *opt,
                     const PassOptions *po, const char *arch, CompileResult *out, Diag *diag)
{
    /* 4. passes on a copy, so out->ir stays the lowered IR */
    int lowered_from = 0, raised_from = 0;
    IrFunc *gpu = gpu_passes(ir, po, opt->fit_stages, opt->deep_pipeline, &lowered_from,
                             &raised_from, out->arena, diag);
    if (!gpu)
        return false;

    /* 5. LLVM and PTX */
    CodegenOptions co = codegen_options(opt, po->sm, po->arch_specific, out->arena);
    StrBuf ptx = {0};
    bool ok = codegen_emit(gpu, &co, opt->emit == EMIT_LLVM ? &out->output : NULL,
                           opt->emit == EMIT_PTX ? &ptx : NULL, diag);
    if (!ok) {
        strbuf_free(&ptx);
        return false;
    }

    if (!fill_meta(&out->meta, gpu, arch, kernel, diag)) {
        strbuf_free(&ptx);
        return false;
    }
    meta_stages(&out->meta, gpu, lowered_from, raised_from);
    if (opt->emit == EMIT_PTX) {
        kernel_meta_write(&out->output, &out->meta);
        strbuf_append_n(&out->output, ptx.data ? ptx.data : "", ptx.len);
    }
    strbuf_free(&ptx);
    return true;
}

static bool compile_body(const SrcFile *file, const CompileOptions *opt, CompileResult *out,
                         Diag *diag)
{
    if (opt->emit == EMIT_C)
        return emit_c_compile(file, opt, out, diag);
    memset(out, 0, sizeof *out);
    out->arena = arena_new();

    const char *arch;
    int sm, num_warps;
    bool arch_specific;
    if (!check_target(opt, &arch, &sm, &arch_specific, &num_warps, diag))
        return false;

    /* 1 to 3: syntax, sema, tile IR */
    IrFunc *ir = NULL;
    const Kernel *kernel = NULL;
    FrontEnd fe = front_end(file, opt, arch, sm, arch_specific, out, diag, &ir, &kernel);
    if (fe != FRONT_IR)
        return fe == FRONT_DONE;
    ir->num_warps = opt->num_warps ? num_warps : (ir->num_warps ? ir->num_warps : 4);
    if (opt->num_stages)
        ir->num_stages = opt->num_stages;
    /* The interpreter runs the IR as lowered; the GPU path continues from the same IR. */
    out->ir = ir;

    PassOptions po = pass_options(opt, ir, sm, arch_specific);
    if (opt->emit == EMIT_IR)
        return emit_ir(ir, kernel, opt, &po, out, diag);
    /* 4 and 5: passes, LLVM and PTX */
    return emit_gpu(ir, kernel, opt, &po, arch, out, diag);
}

void compile_result_free(CompileResult *r)
{
    strbuf_free(&r->output);
    strbuf_free(&r->header);
    arena_free(r->arena);
    memset(r, 0, sizeof *r);
}
