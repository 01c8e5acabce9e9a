/* tensor_map.c: a kernel's TMA tensor maps (KernelMeta.tmaps, docs/ptx-metadata.md "tensor_map")
 * evaluated against one launch's arguments, into what cuTensorMapEncodeTiled takes, with TMA's
 * rules checked first so that a bad argument gets a message naming it instead of the driver's
 * CUDA_ERROR_INVALID_VALUE. Pure: no driver call, so it is tested without a GPU
 * (tests/unit/runtime_tensor_map.c); cuda.c encodes and passes the maps. */
#include "runtime/cuda_api.h"
#include "runtime/runtime.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

/* The rules below are cuTensorMapEncodeTiled's (CUDA Driver API, "Tensor Map Object Management"):
 * globalAddress 16-byte aligned; globalDim non-zero and at most 2^32; globalStrides (bytes, dims
 * 1..rank-1) multiples of 16 below 2^40; boxDim from 1 to 256 with boxDim[0] * element size a
 * multiple of 16 bytes, and at most the swizzle span when swizzled. */
#define TMAP_MAX_STRIDE_BYTES (INT64_C(1) << 40)

/* Parameter index's name for messages: from the kernel's names, else "argument N" (1-based, as
 * rt_check_args counts). */
static const char *param_name(const struct tric_kernel_s *k, int index, char *buf, size_t size) {
    const char *p = k->param_names;
    for (int i = 0; p && *p && i <= index; i++) {
        size_t len = strcspn(p, " ");
        if (i == index && len > 0 && !(len == 1 && *p == '_')) {
            snprintf(buf, size, "%.*s", (int)len, p);
            return buf;
        }
        p += len;
        p += *p == ' ';
    }
    snprintf(buf, size, "argument %d", index + 1);
    return buf;
}

/* v in the kernel's names, for messages: "2*M*K", "64". */
static void value_text(StrBuf *out, const struct tric_kernel_s *k, const LaunchValue *v) {
    char name[64];
    bool sep = false;
    if (v->constant != 1 || v->nparams == 0) {
        strbuf_printf(out, "%" PRId64, v->constant);
        sep = true;
    }
    for (int i = 0; i < v->nparams; i++) {
        strbuf_printf(out, "%s%s", sep ? "*" : "", param_name(k, v->params[i], name, sizeof name));
        sep = true;
    }
}

/* An integer parameter's value at this launch: sign-extended from a signed 32-bit (or narrower)
 * type, zero-extended from an unsigned one (what the kernel itself sees), an i64/u64 as is. */
static int64_t int_arg(const struct tric_kernel_s *k, int index, const tric_arg *a) {
    if (k->param_kind[index] == RT_PARAM_I64)
        return a->v.i64;
    return dtype_is_signed(k->param_types[index].dtype) ? (int64_t)a->v.i32
                                                        : (int64_t)(uint32_t)a->v.i32;
}

/* The CUtensorMapDataType for elements of t: their own where TMA has one; the types it lacks
 * (fp8, signed 8- and 16-bit ints) as the unsigned type of their size, since a load copies
 * bytes. */
static int data_type(DType t) {
    switch (t) {
    case DT_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DT_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DT_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DT_F64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DT_I1:
    case DT_I8:
    case DT_U8:
    case DT_F8E4NV:
    case DT_F8E5: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case DT_I16:
    case DT_U16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case DT_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DT_U32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DT_I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case DT_U64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case DT_COUNT: break;
    }
    return -1;
}

/* Fails the launch for k's map i: "KERNEL: tensor map I (base NAME): " and the text. Messages are
 * made only here, so a launch that passes formats nothing. */
TRIC_PRINTF(3, 4)
static tric_status map_fail(const struct tric_kernel_s *k, int i, const char *fmt, ...) {
    const TensorMap *t = &k->tmaps[i];
    char base[64] = "?";
    if (t->base_param >= 0 && t->base_param < k->nparams)
        param_name(k, t->base_param, base, sizeof base);
    StrBuf sb = {0};
    strbuf_printf(&sb, "%s: tensor map %d (base %s): ", k->name, i, base);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    tric_status st = rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s", sb.data ? sb.data : "");
    strbuf_free(&sb);
    return st;
}

/* The map's own facts, fixed at compile time: a failure means metadata tric did not write. */
static tric_status check_static(const struct tric_kernel_s *k, int i) {
    const TensorMap *t = &k->tmaps[i];
    if (t->rank < 1 || t->rank > TRIC_TMAP_MAX_RANK || data_type(t->dtype) < 0)
        return map_fail(k, i, "internal error: rank %d, element type %s (TMA takes ranks 1 to 5)",
                        t->rank, dtype_sig_name(t->dtype));
    if (t->base_param < 0 || t->base_param >= k->nparams ||
        k->param_kind[t->base_param] != RT_PARAM_PTR)
        return map_fail(k, i, "internal error: the base is parameter %d, not a pointer parameter",
                        t->base_param);
    for (int d = 0; d < t->rank; d++)
        if (t->box[d] < 1 || t->box[d] > 256)
            return map_fail(k, i,
                            "internal error: the box's dim %d is %d elements, not in [1, 256] "
                            "(cuTensorMapEncodeTiled)",
                            d, t->box[d]);
    if (t->swizzle != 0 && t->swizzle != 32 && t->swizzle != 64 && t->swizzle != 128)
        return map_fail(k, i, "internal error: swizzle %d bytes", t->swizzle);
    int inner = t->box[0] * dtype_bytes(t->dtype);
    if (inner % 16 != 0 || (t->swizzle && inner > t->swizzle))
        return map_fail(k, i,
                        "internal error: the box's inner dim is %d bytes: a multiple of 16 and at "
                        "most the swizzle (%d bytes) are needed (cuTensorMapEncodeTiled)",
                        inner, t->swizzle);
    return TRIC_SUCCESS;
}

/* How a value came about, for messages: " (M)", " (2*M*K)"; given an element count too:
 * " (stride_am = 100 elements)", " (100 elements)". Nothing for a constant alone. */
static void origin_text(StrBuf *out, const struct tric_kernel_s *k, const LaunchValue *v,
                        const int64_t *elements) {
    if (v->nparams == 0 && !elements)
        return;
    strbuf_append(out, " (");
    if (v->nparams > 0)
        value_text(out, k, v);
    if (v->nparams > 0 && elements)
        strbuf_append(out, " = ");
    if (elements)
        strbuf_printf(out, "%" PRId64 " elements", *elements);
    strbuf_putc(out, ')');
}

/* "WHAT D is SHOWN UNIT (ORIGIN), RULE" for map i's value v: WHAT D is "dim 1" or "the stride of
 * dim 1". */
static tric_status value_fail(const struct tric_kernel_s *k, int i, const LaunchValue *v,
                              const char *what, int d, int64_t shown, const char *unit,
                              const int64_t *elements, const char *rule) {
    StrBuf origin = {0};
    origin_text(&origin, k, v, elements);
    tric_status st = map_fail(k, i, "%s %d is %" PRId64 "%s%s, %s", what, d, shown, unit,
                              origin.data ? origin.data : "", rule);
    strbuf_free(&origin);
    return st;
}

static const char tma_rule[] = "(TMA's rule; cuTensorMapEncodeTiled)";

/* v's value at this launch into *out; an error when a factor is not an integer parameter
 * (internal) or the product leaves int64. what and d name the value in messages. */
static tric_status eval_value(const struct tric_kernel_s *k, int i, const LaunchValue *v,
                              const tric_arg *args, const char *what, int d, int64_t *out) {
    int64_t x = v->constant;
    for (int j = 0; j < v->nparams; j++) {
        int p = v->params[j];
        if (p < 0 || p >= k->nparams ||
            (k->param_kind[p] != RT_PARAM_I32 && k->param_kind[p] != RT_PARAM_I64))
            return map_fail(k, i,
                            "internal error: %s %d reads parameter %d, not an integer "
                            "parameter",
                            what, d, p);
        if (__builtin_mul_overflow(x, int_arg(k, p, &args[p]), &x)) {
            StrBuf text = {0};
            value_text(&text, k, v);
            tric_status st = map_fail(k, i, "%s %d (%s) overflows 64 bits %s", what, d,
                                      text.data ? text.data : "", tma_rule);
            strbuf_free(&text);
            return st;
        }
    }
    *out = x;
    return TRIC_SUCCESS;
}

/* The dims (unbounded ones at RT_TMAP_UNBOUNDED_DIM), the box, the element strides. */
static tric_status eval_dims(const struct tric_kernel_s *k, int i, const tric_arg *args,
                             RtTensorMapArgs *out) {
    const TensorMap *t = &k->tmaps[i];
    for (int d = 0; d < t->rank; d++) {
        out->box[d] = (uint32_t)t->box[d];
        out->element_strides[d] = 1;
        if (t->dims[d].unbounded) {
            out->dims[d] = RT_TMAP_UNBOUNDED_DIM;
            continue;
        }
        int64_t dim = 0;
        tric_status st = eval_value(k, i, &t->dims[d], args, "dim", d, &dim);
        if (st != TRIC_SUCCESS)
            return st;
        if (dim < 1 || (uint64_t)dim > RT_TMAP_UNBOUNDED_DIM)
            return value_fail(k, i, &t->dims[d], "dim", d, dim, "", NULL,
                              "not in [1, 2^31 - 1] (TMA's coordinates are 32-bit signed; larger "
                              "dims fault on the H100)");
        out->dims[d] = (uint64_t)dim;
    }
    return TRIC_SUCCESS;
}

/* The strides: the innermost 1 (not passed), the others in bytes. */
static tric_status eval_strides(const struct tric_kernel_s *k, int i, const tric_arg *args,
                                RtTensorMapArgs *out) {
    const TensorMap *t = &k->tmaps[i];
    static const char what[] = "the stride of dim";
    int esize = dtype_bytes(t->dtype);
    for (int d = 0; d < t->rank; d++) {
        const LaunchValue *v = &t->strides[d];
        int64_t stride = 0, bytes = 0;
        if (v->unbounded)
            return map_fail(k, i, "internal error: %s %d is unbounded", what, d);
        tric_status st = eval_value(k, i, v, args, what, d, &stride);
        if (st != TRIC_SUCCESS)
            return st;
        if (d == 0) {
            /* The driver takes no stride for the innermost dim: TMA reads it contiguously. */
            if (stride != 1)
                return value_fail(k, i, v, what, d, stride, " elements", NULL,
                                  "not 1: TMA reads the innermost dim contiguously");
            continue;
        }
        if (__builtin_mul_overflow(stride, (int64_t)esize, &bytes))
            return value_fail(k, i, v, what, d, stride, " elements", NULL,
                              "over 2^40 bytes (TMA's rule; cuTensorMapEncodeTiled)");
        if (bytes < 0 || bytes >= TMAP_MAX_STRIDE_BYTES)
            return value_fail(k, i, v, what, d, bytes, " bytes", &stride,
                              "not in [0, 2^40) (TMA's rule; cuTensorMapEncodeTiled)");
        if (bytes % 16 != 0)
            return value_fail(k, i, v, what, d, bytes, " bytes", &stride,
                              "not a multiple of 16 (TMA's rule; cuTensorMapEncodeTiled)");
        out->strides[d - 1] = (uint64_t)bytes;
    }
    return TRIC_SUCCESS;
}

tric_status rt_tensor_map_args(const struct tric_kernel_s *k, int i, const tric_arg *args,
                               RtTensorMapArgs *out) {
    const TensorMap *t = &k->tmaps[i];
    memset(out, 0, sizeof *out);
    tric_status st = check_static(k, i);
    if (st != TRIC_SUCCESS)
        return st;
    out->data_type = data_type(t->dtype);
    out->rank = (uint32_t)t->rank;
    out->address = rt_arg_bits(&args[t->base_param]);
    if (out->address % 16 != 0)
        return map_fail(k, i, "the base address 0x%" PRIx64 " is not 16-byte aligned %s",
                        out->address, tma_rule);
    if ((st = eval_dims(k, i, args, out)) != TRIC_SUCCESS ||
        (st = eval_strides(k, i, args, out)) != TRIC_SUCCESS)
        return st;
    out->swizzle = t->swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                   : t->swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                   : t->swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                      : CU_TENSOR_MAP_SWIZZLE_NONE;
    /* Triton's choice: fetch 256 bytes into L2 for a 128-byte swizzled box (its rows are 128
     * bytes), 128 otherwise. */
    out->l2_promotion =
        t->swizzle == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    return TRIC_SUCCESS;
}

tric_status rt_tensor_maps_make(struct tric_kernel_s *k, const tric_arg *args,
                                RtTensorMapEncode encode, struct CUtensorMap *maps) {
    /* Taken without waiting: a launch that finds another thread in the cache encodes afresh. */
    bool cache = !__atomic_test_and_set(&k->tmap_cache_busy, __ATOMIC_ACQUIRE);
    tric_status st = TRIC_SUCCESS;
    for (int i = 0; st == TRIC_SUCCESS && i < k->ntmaps; i++) {
        RtTensorMapArgs a;
        st = rt_tensor_map_args(k, i, args, &a); /* zero-filled first: memcmp sees no padding */
        if (st != TRIC_SUCCESS)
            break;
        RtTensorMapCached *c = &k->tmap_cache[i];
        _Static_assert(sizeof c->map == sizeof maps[i], "a cached map holds a CUtensorMap");
        if (cache && c->valid && memcmp(&c->args, &a, sizeof a) == 0) {
            memcpy(&maps[i], c->map, sizeof c->map);
            continue;
        }
        st = encode(k, i, &a, &maps[i]);
        if (cache) {
            c->valid = st == TRIC_SUCCESS;
            c->args = a;
            memcpy(c->map, &maps[i], sizeof c->map);
        }
    }
    if (cache)
        __atomic_clear(&k->tmap_cache_busy, __ATOMIC_RELEASE);
    return st;
}
