/* llvm.c: the thin wrapper around the LLVM C API: context, module, builder, target machine,
 * common types, and one helper per intrinsic kind (declared on first use). */
#include "codegen/internal.h"

#include <llvm-c/Support.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* LLVM's command-line options (CodegenOptions.llvm_args) are process-wide globals: parsing a
 * second set would not reset what the first set (an option it leaves out keeps its value) and
 * would race with compiles on other threads. So the first compile of a process initializes the
 * target and parses its llvm_args once, under this lock, and they hold for the whole process; a
 * later compile asking for other args (another text; NULL and "" are the same) is refused with an
 * error instead of being compiled, silently, with the first's. The runtime's compiles all carry
 * TRIC_LLVM_ARGS, read once, so only a caller switching tric_compile_options.llvm_args within one
 * process meets the refusal. */
static pthread_mutex_t nvptx_lock = PTHREAD_MUTEX_INITIALIZER;
static bool nvptx_ready;
static char nvptx_args[1024];   /* the llvm_args the process parsed */
static char nvptx_tokens[1024]; /* their words, which LLVM's parser may keep pointers into */

static bool nvptx_init(const CodegenOptions *o, Diag *d)
{
    const char *want = o->llvm_args ? o->llvm_args : "";
    if (strlen(want) >= sizeof nvptx_args) {
        diag_plain_error(d, "--llvm-args: %zu characters; at most %zu are taken", strlen(want),
                         sizeof nvptx_args - 1);
        return false;
    }
    char parsed[sizeof nvptx_args];
    pthread_mutex_lock(&nvptx_lock);
    if (!nvptx_ready) {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
        /* 32-bit pointers for shared memory (as Triton and nvcc use): shared addresses fit in 32
         * bits, and 64-bit ones cost a cvt per access. The data layout then says p3:32:32.
         * GVN (tric's -O3 runs it once, NVPTX's codegen pipeline twice more) asks memory
         * dependence analysis, for each load, about the instructions before it in its block, up
         * to -memdep-block-scan-limit of them (100 by default): one alias query per earlier
         * load or store, and on per-element code with run-time strides (an unannotated seed-2
         * tile: 128 scalar global loads a k step) each query is deep in known-bits on the
         * address arithmetic. At 10 that compile does a third fewer instructions, and the PTX of
         * every kernel of scripts/ptx_corpus.sh is the same (at 1 too): the redundant loads of
         * tric's IR are removed earlier by EarlyCSE, which does not use this limit.
         * The user's llvm_args come after and may set it again. */
        const char *args[3 + sizeof nvptx_tokens / 2] = {"tric", "-nvptx-short-ptr",
                                                         "-memdep-block-scan-limit=10"};
        int nargs = 3;
        snprintf(nvptx_tokens, sizeof nvptx_tokens, "%s", want);
        char *save = NULL;
        for (char *tok = strtok_r(nvptx_tokens, " \t", &save);
             tok && nargs < (int)(sizeof args / sizeof args[0]); tok = strtok_r(NULL, " \t", &save))
            args[nargs++] = tok;
        /* LLVMParseCommandLineOptions ignores an option LLVM does not know, without a word: a
         * misspelt one does nothing. */
        LLVMParseCommandLineOptions(nargs, args, NULL);
        snprintf(nvptx_args, sizeof nvptx_args, "%s", want);
        nvptx_ready = true;
    }
    snprintf(parsed, sizeof parsed, "%s", nvptx_args);
    pthread_mutex_unlock(&nvptx_lock);
    if (strcmp(parsed, want) != 0) {
        diag_plain_error(d,
                         "--llvm-args '%s': LLVM's options are set once per process, and this "
                         "process's first compile set them to '%s'; compile with other LLVM "
                         "options in another process",
                         want, parsed);
        return false;
    }
    return true;
}

bool cg_llvm_init(CgLlvm *l, const char *module_name, const CodegenOptions *o, Diag *d)
{
    memset(l, 0, sizeof *l);
    if (!nvptx_init(o, d))
        return false;
    const char *triple = "nvptx64-nvidia-cuda";
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &err)) {
        diag_plain_error(d, "LLVM has no NVPTX target: %s", err ? err : "?");
        LLVMDisposeMessage(err);
        return false;
    }
    char cpu[16];
    int sm = o->sm ? o->sm : 90;
    snprintf(cpu, sizeof cpu, "sm_%d%s", sm, o->arch_specific && sm >= 90 ? "a" : "");
    /* PTX ISA 8.0 (CUDA 12.0) covers sm_80..sm_90a; LLVM 19 can write up to 8.5. */
    LLVMCodeGenOptLevel level = o->opt_level <= 0   ? LLVMCodeGenLevelNone
                                : o->opt_level == 1 ? LLVMCodeGenLevelLess
                                : o->opt_level == 2 ? LLVMCodeGenLevelDefault
                                                    : LLVMCodeGenLevelAggressive;
    /* sm_89's fp8 conversions (cvt .e4m3x2/.e5m2x2, arith.c) need PTX ISA 8.1 there (8.0 has
     * them from sm_90 only, as ptxas says); CUDA 12.1 reads 8.1. */
    const char *ptx_version = sm == 89 ? "+ptx81" : "+ptx80";
    l->tm = LLVMCreateTargetMachine(target, triple, cpu, ptx_version, level, LLVMRelocDefault,
                                    LLVMCodeModelDefault);
    if (!l->tm) {
        diag_plain_error(d, "LLVM cannot make a target machine for %s", cpu);
        return false;
    }
    l->ctx = LLVMContextCreate();
    l->mod = LLVMModuleCreateWithNameInContext(module_name, l->ctx);
    LLVMSetTarget(l->mod, triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(l->tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(l->mod, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
    l->b = LLVMCreateBuilderInContext(l->ctx);
    l->i1 = LLVMInt1TypeInContext(l->ctx);
    l->i8 = LLVMInt8TypeInContext(l->ctx);
    l->i16 = LLVMInt16TypeInContext(l->ctx);
    l->i32 = LLVMInt32TypeInContext(l->ctx);
    l->i64 = LLVMInt64TypeInContext(l->ctx);
    l->f16 = LLVMHalfTypeInContext(l->ctx);
    l->bf16 = LLVMBFloatTypeInContext(l->ctx);
    l->f32 = LLVMFloatTypeInContext(l->ctx);
    l->f64 = LLVMDoubleTypeInContext(l->ctx);
    l->void_t = LLVMVoidTypeInContext(l->ctx);
    l->gptr = LLVMPointerTypeInContext(l->ctx, AS_GLOBAL);
    l->sptr = LLVMPointerTypeInContext(l->ctx, AS_SHARED);
    return true;
}

void cg_llvm_dispose(CgLlvm *l)
{
    if (l->b)
        LLVMDisposeBuilder(l->b);
    if (l->mod)
        LLVMDisposeModule(l->mod);
    if (l->ctx)
        LLVMContextDispose(l->ctx);
    if (l->tm)
        LLVMDisposeTargetMachine(l->tm);
    memset(l, 0, sizeof *l);
}

LLVMValueRef cg_call(CgLlvm *l, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int nargs)
{
    LLVMTypeRef params[8];
    for (int i = 0; i < nargs && i < 8; i++)
        params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nargs, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(l->mod, name);
    if (!fn)
        fn = LLVMAddFunction(l->mod, name, fty);
    return LLVMBuildCall2(l->b, fty, fn, args, (unsigned)nargs, "");
}

void cg_barrier(CgLlvm *l)
{
    if (!l->barrier_threads && l->unaligned) {
        /* the two sides of a warp-specialized function meet at different instructions: not the
         * .aligned form bar.sync is (PTX ISA 9.7.13.1) */
        LLVMValueRef id = cg_i32(l, 0);
        cg_call(l, "llvm.nvvm.barrier.sync", l->void_t, &id, 1);
        return;
    }
    if (!l->barrier_threads) {
        cg_call(l, "llvm.nvvm.barrier0", l->void_t, NULL, 0);
        return;
    }
    LLVMValueRef args[2] = {cg_i32(l, l->barrier_id), cg_i32(l, l->barrier_threads)};
    cg_call(l, "llvm.nvvm.barrier.sync.cnt", l->void_t, args, 2);
}

/* bar.warp.sync with every lane (PTX ISA 9.7.13.2): the warp's lanes meet, and their
 * shared-memory accesses before it are ordered before those after it. A warp-private copy's
 * barrier (IrScratch.warp_private). */
void cg_warp_barrier(CgLlvm *l)
{
    LLVMValueRef all = cg_i32(l, -1);
    cg_call(l, "llvm.nvvm.bar.warp.sync", l->void_t, &all, 1);
}

LLVMValueRef cg_sreg(CgLlvm *l, const char *reg)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", reg);
    return cg_call(l, name, l->i32, NULL, 0);
}

LLVMValueRef cg_i32(CgLlvm *l, int64_t v) { return LLVMConstInt(l->i32, (unsigned long long)v, 1); }
LLVMValueRef cg_i64(CgLlvm *l, int64_t v) { return LLVMConstInt(l->i64, (unsigned long long)v, 1); }

/* Whether v is the scalar ConstantInt k. */
static bool is_const(LLVMValueRef v, int64_t k)
{
    return LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == k;
}

/* For a commutative op whose identity element is `unit`: the other operand when one is the unit,
 * else NULL. */
static LLVMValueRef other_than_unit(LLVMValueRef x, LLVMValueRef y, int64_t unit)
{
    return is_const(y, unit) ? x : is_const(x, unit) ? y : NULL;
}

LLVMValueRef cg_add(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name)
{
    LLVMValueRef v = other_than_unit(x, y, 0);
    return v ? v : LLVMBuildAdd(b, x, y, name);
}

LLVMValueRef cg_mul(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name)
{
    LLVMValueRef v = other_than_unit(x, y, 1);
    return v ? v : LLVMBuildMul(b, x, y, name);
}

LLVMValueRef cg_udiv(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name)
{
    return is_const(y, 1) ? x : LLVMBuildUDiv(b, x, y, name);
}

LLVMValueRef cg_urem(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name)
{
    return is_const(y, 1) ? LLVMConstNull(LLVMTypeOf(x)) : LLVMBuildURem(b, x, y, name);
}

LLVMValueRef cg_asm(CgLlvm *l, LLVMTypeRef ret, const char *text, const char *constraints,
                    LLVMValueRef *args, int nargs, bool side_effects)
{
    LLVMTypeRef params[16];
    for (int i = 0; i < nargs && i < 16; i++)
        params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nargs, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), constraints, strlen(constraints),
                                       side_effects, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(l->b, fty, fn, args, (unsigned)nargs, "");
}
