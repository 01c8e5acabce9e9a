/* kernel.c: the kernel function (ptx_kernel, nvvm annotations, the entry block of thread-invariant
 * values), the dispatch of every op to its lowering, and codegen_emit: lowering, libdevice,
 * optimization and PTX emission in order. docs/codegen.md "The kernel". */
#include "codegen/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A special register read in the entry block (thread-invariant). */
static LLVMValueRef pro_build_sreg(Cg *c, const char *reg)
{
    LLVMBuilderRef saved = c->l->b;
    c->l->b = c->pro;
    LLVMValueRef v = cg_sreg(c->l, reg);
    c->l->b = saved;
    return v;
}

/* ---- the ops ------------------------------------------------------------------------------- */

/* tile_count and workspace: a persistent function's parameters after the tensor maps; the
 * workspace's scratch starts after its flags (ir.h's workspace_scratch_offset, from %nctaid). */
static bool lower_persistent_param(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    if (!c->workspace)
        FAIL(c, "%s outside a persistent function", op_name(op->code));
    if (op->code == OP_TILE_COUNT &&
        (op->attr[0] < 0 || op->attr[0] > 2 || !c->tile_count[op->attr[0]]))
        FAIL(c, "tile_count of axis %lld: the persistent function takes no such grid axis",
             (long long)op->attr[0]);
    LLVMValueRef *el = cg_regs(c, 1);
    el[0] = op->code == OP_TILE_COUNT ? c->tile_count[op->attr[0]] : c->workspace;
    if (op->code == OP_WORKSPACE && op->attr[0] == 1) {
        LLVMValueRef programs = pro_build_sreg(c, "nctaid.x");
        LLVMValueRef flags = LLVMBuildMul(b, programs, cg_i32(c->l, 4 * TRIC_WORKSPACE_FLAGS), "");
        LLVMValueRef at =
            LLVMBuildAnd(b, LLVMBuildAdd(b, flags, cg_i32(c->l, TRIC_WORKSPACE_ALIGN - 1), ""),
                         cg_i32(c->l, -TRIC_WORKSPACE_ALIGN), "");
        LLVMValueRef off = LLVMBuildZExt(b, at, c->l->i64, "");
        el[0] = LLVMBuildGEP2(b, c->l->i8, c->workspace, &off, 1, "scratch");
    }
    cg_set_value(c, op->results[0], el, 1, 0);
    return true;
}

/* The first named barrier of a ping-pong function's turns (after 0 every warp's, 1 and 3 the
 * consumer groups', 2 the producer's). */
#define TURN_BARRIER 4

/* consumer_turn, turn_wait, turn_pass: a ping-pong function's consumer groups taking tiles in
 * turn (IrFunc.ws.consumer_groups, passes/warp_specialize.c). */
static bool lower_turn_op(Cg *c, const IrOp *op)
{
    if (c->partition == PARTITION_ALL || c->f->ws.consumer_groups != 2)
        FAIL(c, "%s outside a ping-pong function's partitions", op_name(op->code));
    if (op->code == OP_CONSUMER_TURN) {
        /* the producer copies every tile; consumer group g runs the tiles of turn g */
        LVal *turn = cg_value(c, op->operands[0]);
        if (c->failed)
            return false;
        LLVMValueRef *el = cg_regs(c, 1);
        el[0] = c->partition == PARTITION_PRODUCER
                    ? LLVMConstInt(c->l->i1, 1, 0)
                    : LLVMBuildICmp(c->l->b, LLVMIntEQ, turn->el[0],
                                    cg_i32(c->l, c->consumer_group), "");
        cg_set_value(c, op->results[0], el, 1, 0);
        return true;
    }
    /* named barriers TURN_BARRIER + g, one a group: group g waits on its own (barrier.sync) and
     * passes the turn on the other's (barrier.arrive), both groups' threads counted (PTX ISA
     * 9.7.13.1 barrier) */
    if (c->partition != PARTITION_CONSUMER)
        FAIL(c, "%s outside the consumers' partition", op_name(op->code));
    int g = op->code == OP_TURN_WAIT ? c->consumer_group : 1 - c->consumer_group;
    char text[64];
    snprintf(text, sizeof text, "barrier.%s %d, %d;", op->code == OP_TURN_WAIT ? "sync" : "arrive",
             TURN_BARRIER + g, 2 * c->partition_threads);
    cg_asm_void(c, text);
    return true;
}

/* One op: the memory-pipeline ops to async_copy.c, the others here or to the file of their
 * kind (the result's distribution is built first, except for convert_layout). */
static bool lower_op(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    /* shared-memory tiles have no registers: no distribution */
    if (op_has(op->code, OPT_PIPELINE))
        return cg_lower_async_copy_op(c, op);
    ValueId r = op->nresults ? op->results[0] : 0;
    Type rt = r ? ir_type(c->f, r) : type_scalar(DT_I32);
    int rlayout = r ? ir_value(c->f, r)->layout : 0;
    Dist *dr = NULL;
    int n = 1;
    if (r && rt.rank > 0 && op->code != OP_CONVERT_LAYOUT) {
        dr = cg_dist_of(c, r);
        if (!dr)
            return false;
        n = dr->nelems;
    }
    LLVMValueRef *el;
    switch (op->code) {
    case OP_CONST: {
        LLVMValueRef k = cg_const(c, rt, op->attr[0], op->fattr);
        el = cg_regs(c, n);
        for (int e = 0; e < n; e++)
            el[e] = k;
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    case OP_UNDEF: {
        /* LLVM's undef: a phi whose other path defines the value before any use */
        LLVMValueRef k = LLVMGetUndef(cg_value_type(c, rt));
        el = cg_regs(c, n);
        for (int e = 0; e < n; e++)
            el[e] = k;
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS: {
        static const char *axes = "xyz";
        char reg[16];
        int ax = op->attr[0] >= 0 && op->attr[0] < 3 ? (int)op->attr[0] : 0;
        snprintf(reg, sizeof reg, "%s.%c", op->code == OP_PROGRAM_ID ? "ctaid" : "nctaid",
                 axes[ax]);
        el = cg_regs(c, 1);
        el[0] = pro_build_sreg(c, reg);
        cg_set_value(c, r, el, 1, 0);
        return true;
    }
    case OP_TILE_COUNT:
    case OP_WORKSPACE: return lower_persistent_param(c, op);
    case OP_CONSUMER_TURN:
    case OP_TURN_WAIT:
    case OP_TURN_PASS: return lower_turn_op(c, op);
    case OP_MAKE_RANGE: {
        if (!dr)
            FAIL(c, "make_range without a layout");
        el = cg_regs(c, n);
        for (int e = 0; e < n; e++)
            el[e] = cg_add(b, cg_coord(c, dr, e, 0), cg_i32(c->l, op->attr[0]), "");
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    case OP_SPLAT: {
        LVal *a = cg_value(c, op->operands[0]);
        if (c->failed)
            return false;
        el = cg_regs(c, n);
        for (int e = 0; e < n; e++)
            el[e] = a->el[0];
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS: {
        LVal *a = cg_value(c, op->operands[0]);
        if (c->failed)
            return false;
        c->vals[r] = *a;
        return true;
    }
    case OP_BROADCAST:
    case OP_EXPAND_DIMS:
    case OP_TRANS: return cg_lower_relayout(c, op, dr, n);
    case OP_RESHAPE:
        if (layout_reshape_is_relabel(c->f, op))
            return cg_lower_merge_pairs(c, op, dr, n);
        return cg_lower_relayout(c, op, dr, n);
    case OP_CONVERT_LAYOUT: return cg_lower_convert_layout(c, op);
    case OP_JOIN:
    case OP_SPLIT: return cg_lower_join_split(c, op, dr, n);
    case OP_SUBTILE: return cg_lower_subtile(c, op);
    case OP_ADDPTR: {
        LVal *p = cg_value(c, op->operands[0]), *o = cg_value(c, op->operands[1]);
        if (c->failed)
            return false;
        DType ot = ir_type(c->f, op->operands[1]).dtype;
        DType pointee = ir_type(c->f, op->operands[0]).dtype;
        LLVMTypeRef pt = cg_mem_type(c, pointee);
        el = cg_regs(c, n);
        for (int e = 0; e < n; e++) {
            LLVMValueRef off = cg_at(o, e);
            /* GEP sign-extends its index; unsigned offsets are zero-extended first. */
            if (!dtype_is_signed(ot) && dtype_bits(ot) < 64)
                off = LLVMBuildZExt(b, off, c->l->i64, "");
            el[e] = LLVMIsAConstantInt(off) && !LLVMConstIntGetZExtValue(off)
                        ? cg_at(p, e) /* a pipelined loop's first k offset, say */
                        : LLVMBuildGEP2(b, pt, cg_at(p, e), &off, 1, "");
        }
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    case OP_LOAD: return cg_lower_load(c, op);
    case OP_STORE: return cg_lower_store(c, op);
    case OP_PREFETCH: return cg_lower_prefetch(c, op);
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS:
    case OP_FLAG_WAIT: return cg_lower_atomic(c, op);
    case OP_PARTIAL_STORE:
    case OP_PARTIAL_ADD: return cg_lower_partial(c, op);
    case OP_DOT: return cg_lower_dot(c, op);
    case OP_REDUCE_SUM:
    case OP_REDUCE_MAX:
    case OP_REDUCE_MIN:
    case OP_ARGMAX:
    case OP_ARGMIN: return cg_lower_reduce(c, op);
    case OP_SCAN: return cg_lower_scan(c, op);
    case OP_ASSERT: return cg_lower_assert(c, op);
    case OP_GDC_WAIT:
    case OP_GDC_LAUNCH_DEPENDENTS: return cg_lower_grid_dep(c, op);
    case OP_FOR: return cg_lower_for(c, op);
    case OP_IF: return cg_lower_if(c, op);
    case OP_WHILE: return cg_lower_while(c, op);
    case OP_YIELD:
    case OP_CONDITION: c->term = op; return true;
    default:
        if (op->nresults == 1)
            return cg_lower_elementwise(c, op);
        FAIL(c, "codegen does not lower op %s", op_name(op->code));
    }
}

/* The results of an op the partition being built does not run: undefined registers of their
 * types, which only the structured ops (for, if, yield) carry and nothing reads. */
static bool placeholder_results(Cg *c, const IrOp *op)
{
    for (int k = 0; k < op->nresults; k++) {
        ValueId r = op->results[k];
        Type t = ir_type(c->f, r), et = t;
        et.rank = 0;
        int n = 1;
        if (t.rank > 0 && !t.is_smem) {
            Dist *d = cg_dist_of(c, r);
            if (!d)
                return false;
            n = d->nelems;
        }
        LLVMValueRef *el = cg_regs(c, n);
        for (int e = 0; e < n; e++)
            el[e] = LLVMGetUndef(cg_value_type(c, et));
        cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
    }
    return true;
}

bool cg_lower_region(Cg *c, const IrRegion *r)
{
    c->term = NULL;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_YIELD || op->code == OP_CONDITION) {
            c->term = op;
            return true;
        }
        bool other = cg_other_partition(c, op);
        /* in a warp-specialized function an op of every warp meets every warp at its barriers
         * (bar.sync 0), an op of one side only that side (its named barrier) */
        int saved = c->l->barrier_threads;
        if (c->partition != PARTITION_ALL)
            c->l->barrier_threads = op->partition == PARTITION_ALL ? 0 : c->partition_threads;
        bool ok = other ? placeholder_results(c, op) : lower_op(c, op) && !c->failed;
        c->l->barrier_threads = saved;
        if (!ok)
            return false;
        c->term = NULL;
    }
    return true;
}

/* Whether op or an op nested in it belongs to one side of a warp-specialized function. */
static bool partitioned(const IrOp *op)
{
    if (op->partition != PARTITION_ALL)
        return true;
    for (int k = 0; k < op->nregions; k++)
        for (int i = 0; i < op->regions[k].nops; i++)
            if (partitioned(op->regions[k].ops[i]))
                return true;
    return false;
}

/* A warp-specialized function's body (IrFunc.ws, passes/warp_specialize.c): the ops before the
 * first one of a partition (or holding one: a persistent kernel's loop over tiles) once, on
 * every thread; then the consumer warps (the first num_warps, or each of the consumer groups of
 * num_warps warps that take tiles in turn) and the producer warpgroup each build the rest,
 * skipping the other's ops, with its register budget (setmaxnreg, PTX ISA 9.7.19.6: the producer
 * releases first, the consumers take what it gave) and its own barrier (the consumers' bar.sync
 * 1, a second consumer group's 3, the producer's 2; an op of every warp meets at bar.sync 0). */
static bool lower_specialized(Cg *c)
{
    const IrFunc *f = c->f;
    CgLlvm *l = c->l;
    const IrRegion *body = &f->body;
    int split = 0;
    while (split < body->nops && !partitioned(body->ops[split]))
        split++;
    IrRegion head = *body;
    head.nops = split;
    if (!cg_lower_region(c, &head) || c->failed)
        return false;
    int groups = f->ws.consumer_groups > 1 ? f->ws.consumer_groups : 1;
    int group_threads = 32 * f->num_warps;
    if (groups > 2)
        FAIL(c, "%d consumer groups (at most 2)", groups);
    /* side g < groups: consumer group g (threads [g, g + 1) x group_threads); side groups: the
     * producer (the threads after them) */
    LLVMBasicBlockRef blocks[3];
    for (int side = 0; side <= groups; side++)
        blocks[side] =
            LLVMAppendBasicBlockInContext(l->ctx, c->fn, side == groups ? "producer" : "consumer");
    for (int side = groups; side > 0; side--) {
        LLVMValueRef at =
            LLVMBuildICmp(l->b, LLVMIntUGE, c->tid, cg_i32(l, side * group_threads), "");
        if (side == 1) {
            LLVMBuildCondBr(l->b, at, blocks[1], blocks[0]);
            break;
        }
        LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(l->ctx, c->fn, "");
        LLVMBuildCondBr(l->b, at, blocks[side], next);
        LLVMPositionBuilderAtEnd(l->b, next);
    }
    IrRegion tail = *body;
    tail.ops = body->ops + split;
    tail.nops = body->nops - split;
    char text[64];
    for (int side = 0; side <= groups; side++) {
        bool producer = side == groups;
        LLVMPositionBuilderAtEnd(l->b, blocks[side]);
        snprintf(text, sizeof text, "setmaxnreg.%s.sync.aligned.u32 %d;", producer ? "dec" : "inc",
                 producer ? f->ws.producer_regs : f->ws.consumer_regs);
        cg_asm_void(c, text);
        c->partition = producer ? PARTITION_PRODUCER : PARTITION_CONSUMER;
        c->first_thread = side * group_threads;
        c->partition_threads = producer ? 32 * f->ws.producer_warps : group_threads;
        c->consumer_group = producer ? 0 : side;
        c->scratch_shift = producer ? 0 : side * f->ws.scratch_stride;
        l->barrier_id = producer ? 2 : side == 0 ? 1 : 3;
        l->unaligned = true;
        if (!cg_lower_region(c, &tail) || c->failed)
            return false;
        LLVMBuildRetVoid(l->b);
    }
    c->partition = PARTITION_ALL;
    c->consumer_group = c->scratch_shift = 0;
    c->first_thread = c->partition_threads = 0;
    l->barrier_id = 0;
    l->unaligned = false;
    return true;
}

/* ---- the kernel ------------------------------------------------------------------------------- */

static void annotate(Cg *c, const char *key, int value)
{
    CgLlvm *l = c->l;
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(c->fn),
                             LLVMMDStringInContext2(l->ctx, key, strlen(key)),
                             LLVMValueAsMetadata(cg_i32(l, value))};
    LLVMValueRef node = LLVMMetadataAsValue(l->ctx, LLVMMDNodeInContext2(l->ctx, md, 3));
    LLVMAddNamedMetadataOperand(l->mod, "nvvm.annotations", node);
}

/* The tensor maps (passes/tma.c) follow the run-time parameters, each `.param .align 64 .b8
 * NAME[128]` (a byval [128 x i8], align 64) that the kernel reads in place: the nvvm
 * "grid_constant" annotation keeps LLVM from copying it to local memory, so its address is a
 * generic address of the parameter space, which cp.async.bulk.tensor takes (PTX ISA 9.7.9.27:
 * the tensor map in .param, .const or .global space; CUDA's __grid_constant__). */
static void tensor_map_params(Cg *c)
{
    CgLlvm *l = c->l;
    const IrFunc *f = c->f;
    LLVMTypeRef map_t = LLVMArrayType2(l->i8, 128);
    LLVMMetadataRef idx[TRIC_MAX_TENSOR_MAPS];
    for (int i = 0; i < f->ntmaps; i++) {
        unsigned at = (unsigned)(f->nparams + i);
        LLVMAttributeRef byval =
            LLVMCreateTypeAttribute(l->ctx, LLVMGetEnumAttributeKindForName("byval", 5), map_t);
        LLVMAttributeRef align =
            LLVMCreateEnumAttribute(l->ctx, LLVMGetEnumAttributeKindForName("align", 5), 64);
        LLVMAddAttributeAtIndex(c->fn, at + 1, byval);
        LLVMAddAttributeAtIndex(c->fn, at + 1, align);
        c->tmaps[i] = LLVMGetParam(c->fn, at);
        char name[32];
        snprintf(name, sizeof name, "tensor_map_%d", i);
        LLVMSetValueName2(c->tmaps[i], name, strlen(name));
        idx[i] = LLVMValueAsMetadata(cg_i32(l, (int)at + 1)); /* 1-based */
    }
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(c->fn),
                             LLVMMDStringInContext2(l->ctx, "grid_constant", 13),
                             LLVMMDNodeInContext2(l->ctx, idx, (size_t)f->ntmaps)};
    LLVMValueRef node = LLVMMetadataAsValue(l->ctx, LLVMMDNodeInContext2(l->ctx, md, 3));
    LLVMAddNamedMetadataOperand(l->mod, "nvvm.annotations", node);
}

bool cg_lower(CgLlvm *l, const IrFunc *f, const CodegenOptions *o, bool *needs_libdevice,
              const char **math_name, Diag *d)
{
    Arena *arena = arena_new();
    Cg cg = {.l = l, .f = f, .o = o, .d = d, .arena = arena};
    Cg *c = &cg;
    c->vals = arena_alloc(arena, sizeof(LVal) * (size_t)(f->nvalues + 1));
    int nmapped = f->nparams + f->ntmaps;
    int axes = ir_func_grid_axes(f);
    int nall = nmapped + (f->persistent.on ? 1 + axes : 0);
    LLVMTypeRef *params = arena_alloc(arena, sizeof(LLVMTypeRef) * (size_t)(nall + 1));
    for (int i = 0; i < f->nparams; i++)
        params[i] = cg_value_type(c, ir_type(f, f->params[i].value));
    for (int i = f->nparams; i < nmapped; i++)
        params[i] = LLVMPointerTypeInContext(l->ctx, 0);
    if (f->persistent.on) { /* docs/ptx-metadata.md "persistent" */
        params[nmapped] = l->i32;
        params[nmapped + 1] = cg_value_type(c, type_ptr(DT_I32));
        for (int a = 1; a < axes; a++) /* the grid's y and z after the workspace */
            params[nmapped + 1 + a] = l->i32;
    }
    LLVMTypeRef fty = LLVMFunctionType(l->void_t, params, (unsigned)nall, 0);
    c->fn = LLVMAddFunction(l->mod, f->name, fty);
    LLVMSetFunctionCallConv(c->fn, 71); /* PTX_Kernel: an .entry */
    int threads = ir_func_threads(f);
    annotate(c, "kernel", 1);
    annotate(c, "maxntidx", threads); /* .maxntid: ptxas knows the block size */
    if (f->ws.producer_warps > 0)     /* .maxnreg: what setmaxnreg redistributes */
        annotate(c, "maxnreg", f->ws.max_regs);
    if (f->ntmaps > 0)
        tensor_map_params(c);
    if (f->persistent.on) {
        static const char *const tile_count_names[3] = {"tile_count", "tile_count_y",
                                                        "tile_count_z"};
        c->workspace = LLVMGetParam(c->fn, (unsigned)nmapped + 1);
        LLVMSetValueName2(c->workspace, "workspace", 9);
        for (int a = 0; a < axes; a++) {
            c->tile_count[a] = LLVMGetParam(c->fn, (unsigned)(a ? nmapped + 1 + a : nmapped));
            LLVMSetValueName2(c->tile_count[a], tile_count_names[a], strlen(tile_count_names[a]));
        }
    }
    for (int i = 0; i < f->nparams; i++) {
        LLVMValueRef p = LLVMGetParam(c->fn, (unsigned)i);
        if (f->params[i].name)
            LLVMSetValueName2(p, f->params[i].name, strlen(f->params[i].name));
        cg_set_value(c, f->params[i].value, cg_regs(c, 1), 1, 0);
        c->vals[f->params[i].value].el[0] = p;
    }
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(l->ctx, c->fn, "entry");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(l->ctx, c->fn, "body");
    c->pro = LLVMCreateBuilderInContext(l->ctx);
    LLVMPositionBuilderAtEnd(c->pro, entry);
    LLVMValueRef br = LLVMBuildBr(c->pro, body);
    LLVMPositionBuilderBefore(c->pro, br);
    c->tid = pro_build_sreg(c, "tid.x");
    c->lane = LLVMBuildAnd(c->pro, c->tid, cg_i32(l, 31), "lane");
    /* The warp index, tid / 32, read back from lane 0 (shfl.sync.idx, PTX ISA 9.7.8.6): the same
     * number, but ptxas can prove a value shuffled from one lane warp-uniform, so what derives from
     * it (a warpgroup's wgmma descriptors, above all) stays in uniform registers instead of being
     * moved there (R2UR) before every wgmma. Triton reads its warp id the same way. */
    LLVMPositionBuilderBefore(l->b, br);
    LLVMValueRef warp = LLVMBuildLShr(l->b, c->tid, cg_i32(l, 5), "");
    if (f->ws.consumer_groups > 1) /* each consumer group's warps count from 0 (lower_specialized);
                                      the producer's copies do not read it */
        warp = LLVMBuildURem(l->b, warp, cg_i32(l, f->num_warps), "");
    LLVMValueRef shfl_args[4] = {cg_i32(l, -1), warp, cg_i32(l, 0), cg_i32(l, 0x1f)};
    c->warp = cg_call(l, "llvm.nvvm.shfl.sync.idx.i32", l->i32, shfl_args, 4);
    LLVMSetValueName2(c->warp, "warp", 4);
    LLVMPositionBuilderAtEnd(l->b, body);
    cg_plan_dot_operands(c);
    bool ok;
    if (f->ws.producer_warps > 0) {
        ok = lower_specialized(c) && !c->failed;
    } else {
        ok = cg_lower_region(c, &f->body) && !c->failed;
        if (ok)
            LLVMBuildRetVoid(l->b);
    }
    LLVMDisposeBuilder(c->pro);
    *needs_libdevice = c->needs_libdevice;
    *math_name = c->math_name;
    arena_free(arena);
    return ok;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool codegen_emit_many(const IrFunc *const *fs, int nfuncs, const CodegenOptions *o,
                       StrBuf *llvm_ir, StrBuf *ptx, Diag *d)
{
    /* codegen_times prints where the time goes (lowering, libdevice, O3 + emission). */
    bool times = o->codegen_times;
    double t0 = now_ms();
    CgLlvm l;
    if (nfuncs < 1 || !cg_llvm_init(&l, fs[0]->name, o, d)) {
        if (nfuncs >= 1)
            cg_llvm_dispose(&l);
        return false;
    }
    bool needs_libdevice = false, ok = true;
    const char *math_name = NULL;
    double t1 = now_ms();
    /* Several kernels share one LLVM module: one libdevice link, one optimization pipeline, one
     * PTX (the kernels of an autotuned .tri, one per config). */
    for (int i = 0; ok && i < nfuncs; i++) {
        bool needs = false;
        const char *name = NULL;
        ok = cg_lower(&l, fs[i], o, &needs, &name, d);
        needs_libdevice |= needs;
        if (!math_name)
            math_name = name;
    }
    double t2 = now_ms();
    if (ok && needs_libdevice)
        ok = cg_link_libdevice(&l, o, math_name ? math_name : "?", d);
    double t3 = now_ms();
    if (ok)
        ok = cg_emit(&l, o, llvm_ir, ptx, d);
    double t4 = now_ms();
    cg_llvm_dispose(&l);
    if (times)
        fprintf(stderr,
                "codegen %s (%d kernels): init %.1f ms, lower %.1f ms, libdevice %.1f ms, "
                "optimize+emit %.1f ms, dispose %.1f ms\n",
                fs[0]->name, nfuncs, t1 - t0, t2 - t1, t3 - t2, t4 - t3, now_ms() - t4);
    return ok;
}

bool codegen_emit(const IrFunc *f, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d)
{
    return codegen_emit_many(&f, 1, o, llvm_ir, ptx, d);
}
