/* cpu.c: the cpu device, Triton's interpreter mode in C. Buffers are host memory whose address is
 * the "device pointer"; a launch runs the lowered tile IR with interp_run, which checks every
 * access against the device's live buffers and undoes the launch's stores when one is out of
 * bounds. Everything is synchronous; streams are accepted and ignored. No disk cache: lowering to
 * IR takes milliseconds. api.c reaches it through rt_cpu_ops, the table at the end. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

tric_status rt_cpu_open(struct tric_device_s *dev) {
    dev->kind = TRIC_DEVICE_CPU;
    dev->ops = &rt_cpu_ops;
    snprintf(dev->name, sizeof dev->name, "cpu (tric interpreter)");
    snprintf(dev->arch, sizeof dev->arch, "cpu");
    snprintf(dev->model, sizeof dev->model, "cpu");
    return TRIC_SUCCESS;
}

static tric_status cpu_alloc(struct tric_device_s *dev, struct tric_buffer_s *buf, size_t bytes) {
    /* 128-byte alignment, like cuMemAlloc's (at least 256 there), so that a kernel's :16 pointer
     * hints hold on cpu too. An empty buffer still gets a distinct address. */
    void *p = aligned_alloc(128, bytes ? (bytes + 127) / 128 * 128 : 128);
    if (!p)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", dev->name, bytes);
    pthread_mutex_lock(&dev->lock);
    if (dev->nlive == dev->live_cap) {
        int cap = dev->live_cap ? dev->live_cap * 2 : 16;
        InterpBuffer *live = realloc(dev->live, sizeof *live * (size_t)cap);
        if (live)
            dev->live = live;
        struct tric_buffer_s **owner =
            live ? realloc(dev->live_owner, sizeof *owner * (size_t)cap) : NULL;
        if (!owner) {
            pthread_mutex_unlock(&dev->lock);
            free(p);
            return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        dev->live_owner = owner;
        dev->live_cap = cap;
    }
    buf->addr = (uint64_t)(uintptr_t)p;
    buf->live_index = dev->nlive;
    dev->live[dev->nlive] = (InterpBuffer){buf->addr, bytes};
    dev->live_owner[dev->nlive] = buf;
    dev->nlive++;
    pthread_mutex_unlock(&dev->lock);
    return TRIC_SUCCESS;
}

static void cpu_free(struct tric_buffer_s *buf) {
    struct tric_device_s *dev = buf->device;
    pthread_mutex_lock(&dev->lock);
    /* Swap-remove: the last live buffer takes the freed slot. */
    int i = buf->live_index, last = dev->nlive - 1;
    dev->live[i] = dev->live[last];
    dev->live_owner[i] = dev->live_owner[last];
    dev->live_owner[i]->live_index = i;
    dev->nlive--;
    pthread_mutex_unlock(&dev->lock);
    free((void *)(uintptr_t)buf->addr);
}

static tric_status compile_to_ir(struct tric_device_s *dev, const SrcFile *file,
                                 const tric_compile_options *opt, struct tric_module_s *mod);

static tric_status cpu_compile(struct tric_device_s *dev, const SrcFile *file,
                               const tric_compile_options *opt, struct tric_module_s *mod) {
    unsigned long failures = support_alloc_failures();
    tric_status st = compile_to_ir(dev, file, opt, mod);
    if (support_alloc_failures() != failures)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "%s: out of host memory while compiling",
                       file->name);
    return st;
}

static tric_status compile_to_ir(struct tric_device_s *dev, const SrcFile *file,
                                 const tric_compile_options *opt, struct tric_module_s *mod) {
    Arena *arena = arena_new();
    CompileOptions copt;
    tric_status st = rt_compile_options(opt, mod, arena, &copt);
    if (st != TRIC_SUCCESS) {
        arena_free(arena);
        return st;
    }
    copt.emit = EMIT_IR;
    Diag diag = {0};
    CompileResult *res = &mod->result;
    memset(res, 0, sizeof *res);
    bool ok = driver_compile(file, &copt, res, &diag);
    arena_free(arena); /* the options only; the result has its own arena */
    mod->has_result = true;
    if (!ok || !res->ir) {
        st = rt_fail(TRIC_ERROR_COMPILE, "%s",
                     diag.text.data && diag.text.len ? diag.text.data
                                                     : "compilation failed (no diagnostic)");
        diag_free(&diag);
        return st;
    }
    diag_free(&diag);
    const IrFunc *f = res->ir;
    mod->code = strdup(res->output.data ? res->output.data : "");
    struct tric_kernel_s *k = &mod->kernel;
    snprintf(k->name, sizeof k->name, "%s", f->name);
    if (f->nparams > RT_MAX_PARAMS)
        return rt_kernel_set_params(k, NULL, f->nparams); /* says how many are supported */
    Type types[RT_MAX_PARAMS];
    for (int i = 0; i < f->nparams; i++)
        types[i] = ir_type(f, f->params[i].value);
    st = rt_kernel_set_params(k, types, f->nparams);
    if (st != TRIC_SUCCESS)
        return st;
    for (int i = 0; i < f->nparams; i++)
        rt_kernel_set_hint(k, i, f->params[i].divisibility, f->params[i].equal_to_1);
    /* The names and constexprs a tuner and tric_kernel_constexpr read, as PTX metadata has them. */
    StrBuf names = {0}, defs = {0};
    for (int i = 0; i < f->nparams; i++)
        strbuf_printf(&names, "%s%s", i ? " " : "", f->params[i].name ? f->params[i].name : "_");
    if (res->meta.constexprs[0]) /* every constexpr, as sema bound it (heuristics too) */
        strbuf_append(&defs, res->meta.constexprs);
    for (int i = 0; !res->meta.constexprs[0] && opt && i < opt->nconstexprs; i++)
        strbuf_printf(&defs, "%s%s", i ? " " : "", opt->constexprs[i]);
    rt_kernel_set_names(k, names.data ? names.data : "", defs.data ? defs.data : "", NULL);
    strbuf_free(&names);
    strbuf_free(&defs);
    k->threads = 32 * (copt.num_warps ? copt.num_warps : 4);
    k->shared_bytes = 0;
    /* the interpreter runs its own schedule over the grid asked, every axis of it (interp.c) */
    k->persistent = f->persistent.on;
    k->persistent_axes = ir_func_grid_axes(f);
    k->workspace_bytes = f->persistent.workspace_bytes;
    return TRIC_SUCCESS;
}

/* Streams are accepted and ignored: everything on cpu is done when the call returns. */
static tric_status cpu_launch(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args,
                              struct tric_stream_s *stream, const tric_launch_options *options) {
    (void)stream;
    (void)options; /* launches run one after the other: nothing to overlap */
    struct tric_module_s *mod = k->module;
    struct tric_device_s *dev = mod->device;
    InterpArg iargs[RT_MAX_PARAMS];
    for (int i = 0; i < k->nparams; i++) {
        const tric_arg *a = &args[i];
        Type t = k->param_types[i];
        switch (a->kind) {
        case TRIC_ARG_BUFFER: iargs[i].ptr = a->v.buf.buffer->addr + a->v.buf.offset; break;
        case TRIC_ARG_ADDRESS: iargs[i].ptr = a->v.address; break;
        case TRIC_ARG_I32:
            /* An unsigned parameter sees the same 32 bits as the GPU would. */
            iargs[i].i = dtype_is_signed(t.dtype) ? (int64_t)a->v.i32 : (int64_t)(uint32_t)a->v.i32;
            break;
        case TRIC_ARG_I64: iargs[i].i = a->v.i64; break;
        case TRIC_ARG_F32: iargs[i].f = a->v.f32; break;
        case TRIC_ARG_F64: iargs[i].f = a->v.f64; break;
        }
    }
    if ((uint64_t)grid.x * grid.y * grid.z > (uint64_t)INT32_MAX || grid.x > INT32_MAX)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: grid (%u, %u, %u) is too large", k->name,
                       grid.x, grid.y, grid.z);
    StrBuf err = {0};
    pthread_mutex_lock(&dev->lock); /* the live-buffer list must not change during the run */
    InterpLaunch launch = {
        .grid = {(int)grid.x, (int)grid.y, (int)grid.z},
        .args = iargs,
        .nargs = k->nparams,
        .buffers = dev->live,
        .nbuffers = dev->nlive,
    };
    bool ok = interp_run(mod->result.ir, &launch, &err);
    pthread_mutex_unlock(&dev->lock);
    if (ok) {
        strbuf_free(&err);
        return TRIC_SUCCESS;
    }
    tric_status st =
        rt_fail(TRIC_ERROR_LAUNCH, "%s",
                err.data && err.len ? err.data : "the interpreter failed (no message)");
    strbuf_free(&err);
    return st;
}

/* ---- the rest of the device operations: host memory, no streams, nothing to load ------------- */

static tric_status cpu_synchronize(struct tric_device_s *dev) {
    (void)dev;
    return TRIC_SUCCESS;
}

static void cpu_close(struct tric_device_s *dev) { (void)dev; }

static tric_status cpu_copy_to_device(struct tric_buffer_s *dst, size_t off, const void *src,
                                      size_t n, struct tric_stream_s *s) {
    (void)s;
    memcpy((char *)(uintptr_t)dst->addr + off, src, n);
    return TRIC_SUCCESS;
}

static tric_status cpu_copy_to_host(void *dst, struct tric_buffer_s *src, size_t off, size_t n,
                                    struct tric_stream_s *s) {
    (void)s;
    memcpy(dst, (const char *)(uintptr_t)src->addr + off, n);
    return TRIC_SUCCESS;
}

static tric_status cpu_copy_device(struct tric_buffer_s *dst, size_t doff,
                                   struct tric_buffer_s *src, size_t soff, size_t n,
                                   struct tric_stream_s *s) {
    (void)s;
    memmove((char *)(uintptr_t)dst->addr + doff, (const char *)(uintptr_t)src->addr + soff, n);
    return TRIC_SUCCESS;
}

static tric_status cpu_memset(struct tric_buffer_s *dst, size_t off, int value, size_t n,
                              struct tric_stream_s *s) {
    (void)s;
    memset((char *)(uintptr_t)dst->addr + off, value, n);
    return TRIC_SUCCESS;
}

static tric_status cpu_stream_create(struct tric_device_s *dev, struct tric_stream_s *s) {
    (void)dev;
    (void)s;
    return TRIC_SUCCESS;
}

static tric_status cpu_stream_wrap(struct tric_device_s *dev, void *cu_stream,
                                   struct tric_stream_s *s) {
    (void)cu_stream;
    (void)s;
    return rt_fail(TRIC_ERROR_UNSUPPORTED, "tric_stream_wrap: %s has no CUDA streams", dev->name);
}

static void cpu_stream_destroy(struct tric_stream_s *s) { (void)s; }

static tric_status cpu_stream_synchronize(struct tric_stream_s *s) {
    (void)s;
    return TRIC_SUCCESS;
}

static bool cpu_capturing(struct tric_device_s *dev, struct tric_stream_s *s) {
    (void)dev;
    (void)s;
    return false;
}

static tric_status cpu_load_ptx(struct tric_device_s *dev, struct tric_module_s *mod) {
    (void)mod;
    return rt_fail(TRIC_ERROR_UNSUPPORTED,
                   "%s: a .ptx module needs a cuda device; compile the .tri source for cpu",
                   dev->name);
}

/* The IR lives in mod->result, which rt_module_free frees. */
static void cpu_unload(struct tric_module_s *mod) { (void)mod; }

static tric_status cpu_ensure_loaded(struct tric_kernel_s *k) {
    (void)k;
    return TRIC_SUCCESS;
}

static tric_status cpu_kernel_attributes(struct tric_kernel_s *k, tric_kernel_attrs *out) {
    (void)out;
    return rt_fail(TRIC_ERROR_UNSUPPORTED,
                   "tric_kernel_attributes: %s runs kernels in the "
                   "interpreter, which has no registers, local memory or occupancy",
                   k->module->device->name);
}

const RtDeviceOps rt_cpu_ops = {
    .interprets_ir = true,
    .ahead_of_time_form = ".tir (--emit=ir)",
    .synchronize = cpu_synchronize,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy_to_device,
    .copy_to_host = cpu_copy_to_host,
    .copy_to_device_async = cpu_copy_to_device, /* done when it returns, as every call on cpu */
    .copy_to_host_async = cpu_copy_to_host,
    .copy_device = cpu_copy_device,
    .memset = cpu_memset,
    .stream_create = cpu_stream_create,
    .stream_wrap = cpu_stream_wrap,
    .stream_destroy = cpu_stream_destroy,
    .stream_synchronize = cpu_stream_synchronize,
    .capturing = cpu_capturing,
    .compile = cpu_compile,
    .load_ptx = cpu_load_ptx,
    .unload = cpu_unload,
    .ensure_loaded = cpu_ensure_loaded,
    .kernel_attributes = cpu_kernel_attributes,
    .launch = cpu_launch,
    .time = NULL, /* the interpreter's speed says nothing about the GPU's */
};
