/* interp.c: the CPU interpreter. Runs a kernel's tile IR over a grid, one program at a time, on
 * host memory. Every op works on a whole block with a plain C loop over its elements, so the
 * cost per op is one switch, not one per element.
 *
 * Values. Each IR value owns one flat row-major array of 8-byte slots, allocated the first time
 * the value is computed and reused every time it is computed again (types are static, so the
 * size never changes): a loop of any length runs in constant memory. Ints, bools and pointers
 * live in int64_t slots, sign- or zero-extended from their dtype's width after every op; floats
 * live in double slots, rounded to their dtype after every op (fp32 through C's float, fp16 and
 * bf16 by our own round-to-nearest-even, fp64 exact). Computing an fp32/fp16/bf16 +, -, *, /
 * or sqrt in double and rounding once is correctly rounded, because double has at least 2p + 2
 * bits for each of them (Figueroa, "When is double rounding innocuous?", 1995).
 *
 * Memory. Loads and stores check every masked-in element against the buffers of the launch;
 * the first one outside all of them stops the launch with one message naming the .tri line and
 * the program. Before a store first writes to a 4 KiB page of a buffer, the page's old bytes are
 * saved; a failed launch copies the saved pages back (newest first), so the caller's buffers are
 * exactly as before the launch.
 *
 * Shared memory. A local_alloc buffer holds its logical contents (S slots of the tile, row-major;
 * the swizzle is codegen's business); a slot view holds [buffer value id, slot index], so it
 * aliases the buffer. async_copy copies at once, but the interpreter keeps the books of the
 * asynchronous schedule (commit groups, waits, wgmma sequence numbers, per slot the group of its
 * last copy and the last wgmma reading it) and stops a program that reads a slot before its copy
 * was waited for, or overwrites a slot a running wgmma reads: a wrong schedule fails on the CPU.
 * docs/interpreter.md has the whole story. */
#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small float formats ---------------------------------------------------------------------- */

/* IEEE 754 binary16 (ebits 5, mbits 10) and bfloat16 (the top half of binary32: ebits 8,
 * mbits 7) from a double, rounding to nearest, ties to even, in one step (going through float
 * first would round twice). NaNs keep their top payload bits; overflow gives infinity. */
static uint32_t small_float_from_double(double x, int ebits, int mbits)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint32_t sign = (uint32_t)(b >> 63) << (ebits + mbits);
    int dexp = (int)((b >> 52) & 0x7ff);
    uint64_t mant = b & ((UINT64_C(1) << 52) - 1);
    uint32_t exp_ones = ((1u << ebits) - 1) << mbits;
    if (dexp == 0x7ff) {
        if (mant == 0)
            return sign | exp_ones;
        uint32_t payload = (uint32_t)(mant >> (52 - mbits));
        if (payload == 0)
            payload = 1u << (mbits - 1); /* a NaN must stay a NaN */
        return sign | exp_ones | payload;
    }
    if (dexp == 0)
        return sign; /* zero, or a double subnormal: far below half of the smallest subnormal */
    int bias = (1 << (ebits - 1)) - 1;
    int e = dexp - 1023 + bias; /* the target's biased exponent */
    if (e >= (1 << ebits) - 1)
        return sign | exp_ones; /* at least 2^(emax+1): infinity */
    uint64_t sig = mant | (UINT64_C(1) << 52);
    int shift = 52 - mbits + (e >= 1 ? 0 : 1 - e); /* subnormals lose 1 - e more bits */
    if (shift >= 64)
        return sign;
    uint64_t q = sig >> shift;
    uint64_t rest = sig & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
    if (rest > half || (rest == half && (q & 1)))
        q++;
    /* Normal: q carries the implicit bit, so adding it to (e - 1) << mbits lets a rounding carry
     * run into the exponent (and up to infinity) by itself. Subnormal: q is the encoding, and a
     * carry to 1 << mbits is the smallest normal, also by itself. */
    uint32_t bits = e >= 1 ? ((uint32_t)(e - 1) << mbits) + (uint32_t)q : (uint32_t)q;
    return sign | bits;
}

static double small_float_to_double(uint32_t bits, int ebits, int mbits)
{
    int sign = (bits >> (ebits + mbits)) & 1;
    int exp = (int)((bits >> mbits) & ((1u << ebits) - 1));
    uint32_t mant = bits & ((1u << mbits) - 1);
    int bias = (1 << (ebits - 1)) - 1;
    if (exp == (1 << ebits) - 1) {
        /* Infinity or NaN: build the double's bits so that a NaN keeps its payload. */
        uint64_t d =
            ((uint64_t)sign << 63) | (UINT64_C(0x7ff) << 52) | ((uint64_t)mant << (52 - mbits));
        double r;
        memcpy(&r, &d, sizeof r);
        return r;
    }
    /* Normal: the same value with a double's exponent bias. Subnormal: mant * 2^(1-bias-mbits),
     * exact, with the power of two built from its bits too (no ldexp in the load loops). */
    if (exp == 0) {
        uint64_t scale_bits = (uint64_t)(1023 + 1 - bias - mbits) << 52;
        double scale;
        memcpy(&scale, &scale_bits, sizeof scale);
        double v = (double)mant * scale;
        return sign ? -v : v;
    }
    uint64_t d = ((uint64_t)sign << 63) | ((uint64_t)(exp - bias + 1023) << 52) |
                 ((uint64_t)mant << (52 - mbits));
    double r;
    memcpy(&r, &d, sizeof r);
    return r;
}

static uint32_t half_from_double(double x) { return small_float_from_double(x, 5, 10); }
static double half_to_double(uint32_t h) { return small_float_to_double(h, 5, 10); }
static uint32_t bf16_from_double(double x) { return small_float_from_double(x, 8, 7); }
static double bf16_to_double(uint32_t h) { return small_float_to_double(h, 8, 7); }

/* The nearest value of dtype d (a float dtype) to x. */
static inline double round_to(DType d, double x)
{
    switch (d) {
    case DT_F32: return (double)(float)x;
    case DT_F16: return half_to_double(half_from_double(x));
    case DT_BF16: return bf16_to_double(bf16_from_double(x));
    case DT_F8E4NV:
    case DT_F8E5: return fp8_round(x, d); /* support/float8.c: the GPU's .rn.satfinite */
    default: return x;
    }
}

/* ---- integers ---------------------------------------------------------------------------------- */

/* The width and signedness that the int64 slot of an int, bool or pointer value follows. */
static inline int int_bits(Type t) { return t.is_ptr ? 64 : dtype_bits(t.dtype); }
static inline bool int_signed(Type t) { return !t.is_ptr && dtype_is_signed(t.dtype); }

static inline int64_t int_wrap(uint64_t v, int bits, bool is_signed)
{
    if (bits >= 64)
        return (int64_t)v;
    uint64_t u = v & ((UINT64_C(1) << bits) - 1);
    if (is_signed) {
        uint64_t sign = UINT64_C(1) << (bits - 1);
        return (int64_t)((u ^ sign) - sign);
    }
    return (int64_t)u;
}

static inline bool is_float_value(Type t) { return !t.is_ptr && dtype_is_float(t.dtype); }

/* An int as a double close enough that one more rounding to fp32/fp16/bf16 is exact rounding:
 * beyond 53 bits the dropped bits are OR-ed into the last kept one (round to odd), which makes
 * the second rounding correct for any target of at most 51 bits (Boldo & Melquiond, 2008). */
static double int_to_double_for_rounding(int64_t v, bool is_unsigned)
{
    bool neg = !is_unsigned && v < 0;
    uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (mag >> 53) {
        int s = 64 - __builtin_clzll(mag) - 53;
        uint64_t sticky = (mag & ((UINT64_C(1) << s) - 1)) != 0;
        double d = ldexp((double)((mag >> s) | sticky), s);
        return neg ? -d : d;
    }
    return neg ? -(double)mag : (double)mag;
}

/* float -> int: truncate toward zero, saturate out-of-range values to the dtype's limits, NaN
 * -> 0: what PTX's cvt.rzi.{s,u}N.fM does (PTX ISA, cvt: "float-to-integer conversions saturate
 * ... NaN results in 0"), where LLVM's fptosi would leave it undefined. */
static int64_t float_to_int(double x, int bits, bool is_signed)
{
    if (isnan(x))
        return 0;
    x = trunc(x);
    if (is_signed) {
        double lim = ldexp(1.0, bits - 1);
        if (x <= -lim)
            return int_wrap(UINT64_C(1) << (bits - 1), bits, true);
        if (x >= lim)
            return (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
        return (int64_t)x;
    }
    if (x <= 0)
        return 0;
    if (x >= ldexp(1.0, bits))
        return int_wrap(~UINT64_C(0), bits, false);
    return (int64_t)(uint64_t)x;
}

/* ---- the interpreter's state --------------------------------------------------------------- */

typedef struct Slot {
    void *data; /* int64_t[n] or double[n], by the value's type; NULL until first computed */
    int64_t n;
    /* k + 1 when the value is the registers of wgmma number k (in->wgmmas), still running: no
     * wgmma_wait has retired it on the way here (a wait leaving it pending passes it on, as do
     * loops and ifs), so only a wgmma_wait, a later wgmma as its accumulator or a region's
     * init may read it; 0 otherwise */
    int64_t wgmma_running;
} Slot;

/* A page of a buffer as it was before the launch first stored into it. */
typedef struct SavedPage {
    uint64_t addr;
    size_t len;
    size_t pool_offset; /* its bytes in Interp.pool */
} SavedPage;

enum { PAGE_BYTES = 4096 };

/* The books of one local_alloc buffer, per slot: the commit group of its last async_copy and the
 * sequence number of the last wgmma reading it (-1: none); for a tile a tma_load filled, the
 * mbarrier (buffer value id and slot) whose phase tma_phase completes the copy (tma_bar -1:
 * none). For a buffer of mbarriers, per slot: its phase's pending arrival (mb_arrived 0 or 1
 * made), bytes still to come (mb_tx), phases completed, and the last phase a wait saw complete
 * (mb_waited, -1: none). */
typedef struct SmemBooks {
    int64_t nslots;
    int64_t *copy_group;
    int64_t *wgmma_read;
    int64_t *tma_bar, *tma_bar_slot, *tma_phase;
    int64_t *mb_arrived, *mb_tx, *mb_completed, *mb_waited;
} SmemBooks;

typedef struct Interp {
    const IrFunc *f;
    const InterpLaunch *launch;
    StrBuf *error;
    Slot *slots;
    int pid[3];
    /* a persistent function: the tiles the launch asked for, and its workspace (flags at
     * workspace, scratch at workspace_scratch) */
    int64_t tiles[3];
    uint64_t workspace, workspace_scratch;
    int last_buffer; /* where the previous access was: most accesses hit it again */
    /* undo */
    uint8_t **page_saved; /* per buffer, one bit per page; NULL until the buffer is stored to */
    SavedPage *pages;
    size_t npages, pages_cap;
    unsigned char *pool;
    size_t pool_len, pool_cap;
    /* scratch for copies between regions and for dot/reduce temporaries */
    unsigned char *scratch;
    size_t scratch_cap;
    unsigned char *scratch2;
    size_t scratch2_cap;
    unsigned char *scratch3; /* assign_values' in-flight marks */
    size_t scratch3_cap;
    /* the memory pipeline, per program: group g of async copies is closed by the (g+1)-th
     * async_commit and complete once groups_done > g; wgmma number w is retired once
     * wgmmas_done > w */
    int64_t commits, groups_done;
    int64_t wgmmas, wgmmas_done;
    SmemBooks *books; /* per value id; nslots 0 unless a buffer */
} Interp;

static const char *loc_file(const IrOp *op)
{
    return op && op->loc.file && op->loc.file->name ? op->loc.file->name : "<unknown>";
}

/* Every error starts with "file:line: " (the op's .tri location) and names the program. */
static bool fail(Interp *in, const IrOp *op, const char *fmt, ...) TRIC_PRINTF(3, 4);
static bool fail(Interp *in, const IrOp *op, const char *fmt, ...)
{
    if (op)
        strbuf_printf(in->error, "%s:%d: ", loc_file(op), op->loc.line);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(in->error, fmt, ap);
    va_end(ap);
    return false;
}

/* "element 17 (index [0, 17])" for flat index i of a value of type t. */
static void print_element(StrBuf *sb, Type t, int64_t flat)
{
    int64_t idx[TRIC_MAX_RANK];
    int64_t rest = flat;
    for (int d = t.rank - 1; d >= 0; d--) {
        idx[d] = rest % t.shape[d];
        rest /= t.shape[d];
    }
    strbuf_printf(sb, "element %lld (index [", (long long)flat);
    for (int d = 0; d < t.rank; d++)
        strbuf_printf(sb, "%s%lld", d ? ", " : "", (long long)idx[d]);
    strbuf_append(sb, "])");
}

static void print_program(Interp *in)
{
    strbuf_printf(in->error, "in program (%d, %d, %d)", in->pid[0], in->pid[1], in->pid[2]);
}

static void *scratch_get(unsigned char **buf, size_t *cap, size_t bytes)
{
    if (bytes > *cap) {
        size_t n = *cap ? *cap : 4096;
        while (n < bytes)
            n *= 2;
        void *p = realloc(*buf, n);
        if (!p)
            return NULL;
        *buf = p;
        *cap = n;
    }
    return *buf;
}

static inline Type vtype(const Interp *in, ValueId v) { return in->f->values[v].type; }

/* The storage of an operand; an internal error when the IR uses a value not computed yet. */
static void *operand(Interp *in, const IrOp *op, int i)
{
    if (i >= op->noperands || op->operands[i] <= 0 || op->operands[i] >= in->f->nvalues) {
        fail(in, op, "internal error: %s has no operand %d", op_name(op->code), i);
        return NULL;
    }
    Slot *s = &in->slots[op->operands[i]];
    if (!s->data) {
        fail(in, op, "internal error: operand %d of %s is used before it is computed", i,
             op_name(op->code));
        return NULL;
    }
    if (s->wgmma_running && op->code != OP_WGMMA_WAIT && !(op->code == OP_WGMMA && i == 2) &&
        !op_has(op->code, OPT_REGIONS)) {
        fail(in, op,
             "operand %d of %s is the result of a wgmma no wgmma_wait has retired (a wait that "
             "leaves it pending does not); its registers are still being written",
             i, op_name(op->code));
        return NULL;
    }
    return s->data;
}

static bool has_operand(const IrOp *op, int i) { return i < op->noperands && op->operands[i] > 0; }

/* The storage of a value an op defines, allocated the first time. */
static void *value_storage(Interp *in, const IrOp *op, ValueId v)
{
    Slot *s = &in->slots[v];
    if (!s->data) {
        /* A slot view holds [buffer value id, slot index], not its tile (see run_slot). */
        const IrOp *def = in->f->values[v].def;
        bool view = vtype(in, v).is_smem && def && def->code == OP_SLOT;
        s->n = view ? 2 : type_numel(vtype(in, v));
        s->data = malloc((size_t)(s->n > 0 ? s->n : 1) * 8);
        if (!s->data)
            fail(in, op, "out of memory for a value of %lld elements", (long long)s->n);
    }
    return s->data;
}

static void *result(Interp *in, const IrOp *op)
{
    if (op->nresults < 1) {
        fail(in, op, "internal error: %s has no result", op_name(op->code));
        return NULL;
    }
    return value_storage(in, op, op->results[0]);
}

/* An operand's element stride against the result: 1 when it has the result's size, 0 when it is
 * a single element used for all (lowering normally splats, but a scalar mask is harmless). */
static bool operand_stride(Interp *in, const IrOp *op, int i, int64_t n, int64_t *stride)
{
    int64_t m = type_numel(vtype(in, op->operands[i]));
    if (m == n) {
        *stride = 1;
        return true;
    }
    if (m == 1) {
        *stride = 0;
        return true;
    }
    return fail(in, op, "internal error: operand %d of %s has %lld elements, the result %lld", i,
                op_name(op->code), (long long)m, (long long)n);
}

/* Applies the dtype's semantics to freshly computed slots: wrap ints, round floats. */
static void normalize(Type t, void *data, int64_t n)
{
    if (is_float_value(t)) {
        double *d = data;
        switch (t.dtype) {
        case DT_F32:
            for (int64_t i = 0; i < n; i++)
                d[i] = (double)(float)d[i];
            break;
        case DT_F16:
        case DT_BF16:
        case DT_F8E4NV:
        case DT_F8E5:
            for (int64_t i = 0; i < n; i++)
                d[i] = round_to(t.dtype, d[i]);
            break;
        default: break;
        }
        return;
    }
    int bits = int_bits(t);
    if (bits >= 64)
        return;
    bool s = int_signed(t);
    int64_t *v = data;
    for (int64_t i = 0; i < n; i++)
        v[i] = int_wrap((uint64_t)v[i], bits, s);
}

/* ---- raw bits: memory and bitcast ---------------------------------------------------------- */

/* How an element's slot maps to the bits of its dtype (fp16 as IEEE half, bf16 as the top 16
 * bits of fp32, ints in their width, pointers in 64 bits), decided once per op so that the
 * per-element loops of loads, stores and bitcasts do no table lookups. */
typedef enum BitsKind { BITS_INT, BITS_F16, BITS_BF16, BITS_F32, BITS_F64, BITS_FP8 } BitsKind;

typedef struct Codec {
    BitsKind kind;
    int bits;       /* BITS_INT: the width */
    bool is_signed; /* BITS_INT: sign-extend when decoding */
    DType fp8;      /* BITS_FP8: which format (else the dtype itself) */
} Codec;

static Codec codec_of(Type t)
{
    if (t.is_ptr)
        return (Codec){BITS_INT, 64, false, DT_I64};
    switch (t.dtype) {
    case DT_F16: return (Codec){BITS_F16, 16, false, DT_F16};
    case DT_BF16: return (Codec){BITS_BF16, 16, false, DT_BF16};
    case DT_F32: return (Codec){BITS_F32, 32, false, DT_F32};
    case DT_F64: return (Codec){BITS_F64, 64, false, DT_F64};
    case DT_F8E4NV:
    case DT_F8E5: return (Codec){BITS_FP8, 8, false, t.dtype};
    default: return (Codec){BITS_INT, dtype_bits(t.dtype), dtype_is_signed(t.dtype), t.dtype};
    }
}

static inline uint64_t codec_encode(const Codec *c, const void *data, int64_t i)
{
    if (c->kind == BITS_INT) {
        uint64_t v = (uint64_t)((const int64_t *)data)[i];
        return c->bits >= 64 ? v : v & ((UINT64_C(1) << c->bits) - 1);
    }
    double d = ((const double *)data)[i];
    switch (c->kind) {
    case BITS_F64: {
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    case BITS_F32: {
        float f = (float)d;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    case BITS_F16: return half_from_double(d);
    case BITS_FP8: return fp8_from_double(d, c->fp8);
    default: return bf16_from_double(d);
    }
}

static inline void codec_decode(const Codec *c, void *data, int64_t i, uint64_t bits)
{
    double *d = data;
    switch (c->kind) {
    case BITS_INT: ((int64_t *)data)[i] = int_wrap(bits, c->bits, c->is_signed); break;
    case BITS_F64: memcpy(&d[i], &bits, 8); break;
    case BITS_F32: {
        uint32_t b = (uint32_t)bits;
        float f;
        memcpy(&f, &b, 4);
        d[i] = f;
        break;
    }
    case BITS_F16: d[i] = half_to_double((uint32_t)bits & 0xffff); break;
    case BITS_BF16: d[i] = bf16_to_double((uint32_t)bits & 0xffff); break;
    case BITS_FP8: d[i] = fp8_to_double((uint8_t)bits, c->fp8); break;
    }
}

/* Bytes an element of t takes in memory (int1: one byte, pointers: 8). */
static size_t memory_bytes(Type t) { return t.is_ptr ? 8 : (size_t)dtype_bytes(t.dtype); }

/* ---- the buffers of the launch and the undo of stores --------------------------------------- */

/* The buffer holding all of [addr, addr + size), or -1. */
static int find_buffer(Interp *in, uint64_t addr, size_t size)
{
    const InterpBuffer *b = in->launch->buffers;
    int n = in->launch->nbuffers;
    int i = in->last_buffer;
    if (i < n && addr >= b[i].addr && addr - b[i].addr <= b[i].bytes &&
        size <= b[i].bytes - (addr - b[i].addr))
        return i;
    for (i = 0; i < n; i++) {
        if (addr >= b[i].addr && addr - b[i].addr <= b[i].bytes &&
            size <= b[i].bytes - (addr - b[i].addr)) {
            in->last_buffer = i;
            return i;
        }
    }
    return -1;
}

/* "the buffer passed as y_ptr": the pointer parameter whose argument points into [base, end] (the
 * last one at or below addr when several do: the access most likely started from it), so that
 * the report speaks of the kernel's names rather than of the order the buffers were allocated in.
 */
static void print_buffer_owner(Interp *in, uint64_t addr, uint64_t base, uint64_t end)
{
    const IrFunc *f = in->f;
    const InterpArg *args = in->launch->args;
    int owner = -1;
    for (int i = 0; i < f->nparams && i < in->launch->nargs; i++) {
        uint64_t p = args[i].ptr;
        if (!vtype(in, f->params[i].value).is_ptr || p < base || p > end)
            continue;
        if (owner < 0 || (p <= addr && (args[owner].ptr > addr || p > args[owner].ptr)))
            owner = i;
    }
    if (owner >= 0 && f->params[owner].name && f->params[owner].name[0])
        strbuf_printf(in->error, "the buffer passed as %s", f->params[owner].name);
    else if (owner >= 0)
        strbuf_printf(in->error, "the buffer passed as argument %d", owner + 1);
    else
        strbuf_append(in->error, "a buffer no argument of the launch points into");
}

static bool out_of_bounds(Interp *in, const IrOp *op, Type shape, int64_t flat, uint64_t addr,
                          size_t size, bool is_store)
{
    fail(in, op, "out-of-bounds %s ",
         op->code == OP_ASYNC_COPY                                ? "async_copy"
         : op->code == OP_ATOMIC_RMW || op->code == OP_ATOMIC_CAS ? "atomic"
         : is_store                                               ? "store"
                                                                  : "load");
    print_program(in);
    strbuf_append(in->error, ": ");
    print_element(in->error, shape, flat);
    strbuf_printf(in->error,
                  " %s address 0x%llx (%zu bytes), outside every buffer passed to the launch",
                  is_store ? "writes" : "reads", (unsigned long long)addr, size);
    /* Name the nearest buffer: usually the one the kernel meant, off by its last block. */
    const InterpBuffer *b = in->launch->buffers;
    int best = -1;
    uint64_t best_dist = 0;
    for (int i = 0; i < in->launch->nbuffers; i++) {
        uint64_t end = b[i].addr + b[i].bytes;
        uint64_t dist = addr < b[i].addr ? b[i].addr - addr : addr >= end ? addr - end + 1 : 0;
        if (best < 0 || dist < best_dist) {
            best = i;
            best_dist = dist;
        }
    }
    if (best >= 0) {
        uint64_t base = b[best].addr, end = base + b[best].bytes;
        const char *where = addr == end   ? "just past the end of"
                            : addr > end  ? "bytes past the end of"
                            : addr < base ? "bytes before"
                                          : "it runs past the end of";
        strbuf_append(in->error, " (");
        if (addr > end || addr < base)
            strbuf_printf(in->error, "%llu ",
                          (unsigned long long)(addr > end ? addr - end : base - addr));
        strbuf_printf(in->error, "%s ", where);
        print_buffer_owner(in, addr, base, end);
        strbuf_printf(in->error, " [0x%llx, 0x%llx))", (unsigned long long)base,
                      (unsigned long long)end);
    }
    return false;
}

/* Saves the page of buffer `buf` holding byte offset `off`, unless saved already. */
static bool save_page(Interp *in, const IrOp *op, int buf, uint64_t off)
{
    const InterpBuffer *b = &in->launch->buffers[buf];
    uint64_t page = off / PAGE_BYTES;
    if (!in->page_saved[buf]) {
        size_t npages = (b->bytes + PAGE_BYTES - 1) / PAGE_BYTES;
        in->page_saved[buf] = calloc((npages + 7) / 8, 1);
        if (!in->page_saved[buf])
            return fail(in, op, "out of memory for the undo log");
    }
    uint8_t *bits = in->page_saved[buf];
    if (bits[page / 8] & (1u << (page % 8)))
        return true;
    uint64_t start = page * PAGE_BYTES;
    size_t len = b->bytes - start < PAGE_BYTES ? (size_t)(b->bytes - start) : PAGE_BYTES;
    if (in->npages == in->pages_cap) {
        size_t cap = in->pages_cap ? in->pages_cap * 2 : 64;
        SavedPage *p = realloc(in->pages, cap * sizeof *p);
        if (!p)
            return fail(in, op, "out of memory for the undo log");
        in->pages = p;
        in->pages_cap = cap;
    }
    if (in->pool_len + len > in->pool_cap) {
        size_t cap = in->pool_cap ? in->pool_cap : 16 * PAGE_BYTES;
        while (cap < in->pool_len + len)
            cap *= 2;
        unsigned char *p = realloc(in->pool, cap);
        if (!p)
            return fail(in, op, "out of memory for the undo log");
        in->pool = p;
        in->pool_cap = cap;
    }
    memcpy(in->pool + in->pool_len, (const void *)(uintptr_t)(b->addr + start), len);
    in->pages[in->npages++] = (SavedPage){b->addr + start, len, in->pool_len};
    in->pool_len += len;
    bits[page / 8] |= (uint8_t)(1u << (page % 8));
    return true;
}

/* Puts back every saved page, newest first: where buffers overlap, the oldest bytes win. */
static void undo_stores(Interp *in)
{
    for (size_t i = in->npages; i-- > 0;)
        memcpy((void *)(uintptr_t)in->pages[i].addr, in->pool + in->pages[i].pool_offset,
               in->pages[i].len);
}

/* ---- elementwise ops --------------------------------------------------------------------------- */

static bool run_unary(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt);
    void *a = operand(in, op, 0);
    void *r = a ? result(in, op) : NULL;
    int64_t sa;
    if (!r || !operand_stride(in, op, 0, n, &sa))
        return false;
    if (is_float_value(rt)) {
        const double *x = a;
        double *y = r;
        for (int64_t i = 0; i < n; i++) {
            double v = x[i * sa];
            switch (op->code) {
            case OP_NEG: v = -v; break;
            case OP_EXP: v = exp(v); break;
            case OP_EXP2: v = exp2(v); break;
            case OP_LOG: v = log(v); break;
            case OP_LOG2: v = log2(v); break;
            case OP_SQRT: v = sqrt(v); break;
            case OP_RSQRT: v = 1.0 / sqrt(v); break;
            case OP_ABS: v = fabs(v); break;
            case OP_SIN: v = sin(v); break;
            case OP_COS: v = cos(v); break;
            case OP_FLOOR: v = floor(v); break;
            case OP_CEIL: v = ceil(v); break;
            default:
                return fail(in, op, "internal error: %s does not take floats", op_name(op->code));
            }
            y[i] = v;
        }
    } else {
        const int64_t *x = a;
        int64_t *y = r;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)x[i * sa];
            switch (op->code) {
            case OP_NEG: v = (uint64_t)0 - v; break;
            case OP_NOT: v = ~v; break;
            case OP_ABS: v = (int64_t)v < 0 && int_signed(rt) ? (uint64_t)0 - v : v; break;
            case OP_FLOOR:
            case OP_CEIL: break;
            default:
                return fail(in, op, "internal error: %s does not take integers", op_name(op->code));
            }
            y[i] = (int64_t)v;
        }
    }
    normalize(rt, r, n);
    return true;
}

static bool division_by_zero(Interp *in, const IrOp *op, Type t, int64_t i)
{
    fail(in, op, "integer division by zero (%s) ", op_name(op->code));
    print_program(in);
    strbuf_append(in->error, ": ");
    print_element(in->error, t, i);
    return false;
}

/* The high 64 bits of a 64x64-bit product, from four 32x32-bit ones (ISO C has no 128-bit int). */
static uint64_t mulhi64(uint64_t a, uint64_t b)
{
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
    uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
    return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

static bool run_binary_int(Interp *in, const IrOp *op, Type at, const int64_t *x, int64_t sa,
                           const int64_t *y, int64_t sb, int64_t *r, int64_t n)
{
    int bits = int_bits(at);
    bool s = int_signed(at);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = x[i * sa], b = y[i * sb];
        uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
        int64_t v;
        switch (op->code) {
        case OP_ADD: v = (int64_t)(ua + ub); break;
        case OP_SUB: v = (int64_t)(ua - ub); break;
        case OP_MUL: v = (int64_t)(ua * ub); break;
        case OP_DIV:
        case OP_REM:
            /* C's truncating division, which Triton's // and % on ints compile to (sdiv/srem,
             * udiv/urem), not Python's floor division. */
            if (b == 0)
                return division_by_zero(in, op, vtype(in, op->results[0]), i);
            if (!s)
                v = (int64_t)(op->code == OP_DIV ? ua / ub : ua % ub);
            else if (b == -1) /* INT64_MIN / -1 overflows in C; the wrapped answer is -a, rem 0 */
                v = op->code == OP_DIV ? (int64_t)((uint64_t)0 - ua) : 0;
            else
                v = op->code == OP_DIV ? a / b : a % b;
            break;
        case OP_MIN: v = s ? (a < b ? a : b) : (ua < ub ? a : b); break;
        case OP_MAX: v = s ? (a > b ? a : b) : (ua > ub ? a : b); break;
        case OP_AND: v = a & b; break;
        case OP_OR: v = a | b; break;
        case OP_XOR: v = a ^ b; break;
        /* Shifts by the width or more are defined the way PTX's shl/shr clamp them (PTX ISA,
         * shl/shr: "shift amounts greater than the register width N are clamped to N"): shl
         * gives 0, shr gives 0 or, for signed values, the sign in every bit. A negative amount is
         * a huge unsigned one. */
        case OP_SHL: v = ub >= (uint64_t)bits ? 0 : (int64_t)(ua << ub); break;
        case OP_SHR:
            if (s)
                v = ub >= (uint64_t)bits ? (a < 0 ? -1 : 0) : a < 0 ? ~(~a >> ub) : a >> ub;
            else
                v = ub >= (uint64_t)bits ? 0 : (int64_t)(ua >> ub);
            break;
        case OP_UMULHI: {
            uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
            uint64_t pa = ua & mask, pb = ub & mask;
            if (bits <= 32)
                v = (int64_t)((pa * pb) >> bits);
            else
                v = (int64_t)mulhi64(pa, pb);
            break;
        }
        default:
            return fail(in, op, "internal error: %s does not take integers", op_name(op->code));
        }
        r[i] = v;
    }
    return true;
}

static bool run_binary_float(Interp *in, const IrOp *op, const double *x, int64_t sa,
                             const double *y, int64_t sb, double *r, int64_t n)
{
    switch (op->code) {
    case OP_ADD:
        for (int64_t i = 0; i < n; i++)
            r[i] = x[i * sa] + y[i * sb];
        break;
    case OP_SUB:
        for (int64_t i = 0; i < n; i++)
            r[i] = x[i * sa] - y[i * sb];
        break;
    case OP_MUL:
        for (int64_t i = 0; i < n; i++)
            r[i] = x[i * sa] * y[i * sb];
        break;
    case OP_DIV:
        for (int64_t i = 0; i < n; i++)
            r[i] = x[i * sa] / y[i * sb];
        break;
    case OP_REM: /* frem: C's fmod, the sign of a */
        for (int64_t i = 0; i < n; i++)
            r[i] = fmod(x[i * sa], y[i * sb]);
        break;
    /* tl.minimum/maximum default to propagate_nan=NONE, lowered to minnum/maxnum: a NaN
     * operand yields the other one, as C's fmin/fmax. */
    case OP_MIN:
        for (int64_t i = 0; i < n; i++)
            r[i] = fmin(x[i * sa], y[i * sb]);
        break;
    case OP_MAX:
        for (int64_t i = 0; i < n; i++)
            r[i] = fmax(x[i * sa], y[i * sb]);
        break;
    default: return fail(in, op, "internal error: %s does not take floats", op_name(op->code));
    }
    return true;
}

static bool run_binary(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt);
    void *a = operand(in, op, 0);
    void *b = a ? operand(in, op, 1) : NULL;
    void *r = b ? result(in, op) : NULL;
    int64_t sa, sb;
    if (!r || !operand_stride(in, op, 0, n, &sa) || !operand_stride(in, op, 1, n, &sb))
        return false;
    bool ok = is_float_value(rt)
                  ? run_binary_float(in, op, a, sa, b, sb, r, n)
                  : run_binary_int(in, op, vtype(in, op->operands[0]), a, sa, b, sb, r, n);
    if (ok)
        normalize(rt, r, n);
    return ok;
}

static bool run_fma(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt);
    double *a = operand(in, op, 0), *b = a ? operand(in, op, 1) : NULL,
           *c = b ? operand(in, op, 2) : NULL;
    double *r = c ? result(in, op) : NULL;
    int64_t sa, sb, sc;
    if (!r || !operand_stride(in, op, 0, n, &sa) || !operand_stride(in, op, 1, n, &sb) ||
        !operand_stride(in, op, 2, n, &sc))
        return false;
    if (!is_float_value(rt))
        return fail(in, op, "internal error: fma of a non-float");
    for (int64_t i = 0; i < n; i++) {
        double x = a[i * sa], y = b[i * sb], z = c[i * sc];
        /* One rounding: fmaf for fp32 is exact; for fp16/bf16 the double fma then one rounding
         * to the dtype is exact except in extreme exponent gaps. */
        r[i] = rt.dtype == DT_F32 ? (double)fmaf((float)x, (float)y, (float)z) : fma(x, y, z);
    }
    normalize(rt, r, n);
    return true;
}

/* One libdevice function of the TRIC_LIBDEVICE_FNS table on doubles holding values of the
 * operands' dtype: C's libm (docs/interpreter.md), the caller rounds to the dtype once. */
static double libdevice_apply(LibdeviceFn fn, double x, double y)
{
    switch (fn) {
    case LD_ERF: return erf(x);
    case LD_ERFC: return erfc(x);
    case LD_TANH: return tanh(x);
    case LD_SINH: return sinh(x);
    case LD_COSH: return cosh(x);
    case LD_TAN: return tan(x);
    case LD_ASIN: return asin(x);
    case LD_ACOS: return acos(x);
    case LD_ATAN: return atan(x);
    case LD_ASINH: return asinh(x);
    case LD_ACOSH: return acosh(x);
    case LD_ATANH: return atanh(x);
    case LD_SIN: return sin(x);
    case LD_COS: return cos(x);
    case LD_EXP: return exp(x);
    case LD_EXP2: return exp2(x);
    case LD_EXP10: return pow(10.0, x);
    case LD_EXPM1: return expm1(x);
    case LD_LOG: return log(x);
    case LD_LOG2: return log2(x);
    case LD_LOG10: return log10(x);
    case LD_LOG1P: return log1p(x);
    case LD_CBRT: return cbrt(x);
    case LD_SQRT: return sqrt(x);
    case LD_RSQRT: return 1.0 / sqrt(x);
    case LD_FABS: return fabs(x);
    case LD_FLOOR: return floor(x);
    case LD_CEIL: return ceil(x);
    case LD_TRUNC: return trunc(x);
    case LD_ROUND: return round(x);
    case LD_RINT: return rint(x);
    case LD_NEARBYINT: return nearbyint(x);
    case LD_LGAMMA: return lgamma(x);
    case LD_TGAMMA: return tgamma(x);
    case LD_ISNAN: return isnan(x) ? 1 : 0;
    case LD_ISINF: return isinf(x) ? 1 : 0;
    case LD_SIGNBIT: return signbit(x) ? 1 : 0;
    case LD_POW: return pow(x, y);
    case LD_ATAN2: return atan2(x, y);
    case LD_FMOD: return fmod(x, y);
    case LD_REMAINDER: return remainder(x, y);
    case LD_FMAX: return fmax(x, y);
    case LD_FMIN: return fmin(x, y);
    case LD_FDIM: return fdim(x, y);
    case LD_HYPOT: return hypot(x, y);
    case LD_COPYSIGN: return copysign(x, y);
    case LD_NEXTAFTER:
        return nextafter(x, y); /* fp64; narrower types step in fp32 (next_float_after) */
    case LD_DIV_RN: return x / y;
    case LD_COUNT: break;
    }
    return NAN;
}

/* The float after x toward y: in fp64 for fp64, else in fp32 (fp16 and bf16 are computed in fp32
 * and rounded back, as codegen calls __nv_nextafterf for them). */
static double next_float_after(DType t, double x, double y)
{
    return t == DT_F64 ? nextafter(x, y) : (double)nextafterf((float)x, (float)y);
}

static bool run_libdevice(Interp *in, const IrOp *op)
{
    const LibdeviceInfo *info = libdevice_info(op->attr[0]);
    if (!info || op->noperands != info->nargs)
        return fail(in, op, "internal error: libdevice op with function %lld and %d operands",
                    (long long)op->attr[0], op->noperands);
    LibdeviceFn fn = (LibdeviceFn)op->attr[0];
    Type rt = vtype(in, op->results[0]), at = vtype(in, op->operands[0]);
    int64_t n = type_numel(rt);
    const double *a = operand(in, op, 0);
    const double *b = a && info->nargs == 2 ? operand(in, op, 1) : a;
    void *r = b ? result(in, op) : NULL;
    int64_t sa, sb = 0;
    if (!r || !operand_stride(in, op, 0, n, &sa) ||
        (info->nargs == 2 && !operand_stride(in, op, 1, n, &sb)))
        return false;
    if (!is_float_value(at))
        return fail(in, op, "internal error: libdevice %s of a non-float", info->name);
    if (info->result == LDR_PRED) {
        int64_t *y = r;
        for (int64_t i = 0; i < n; i++)
            y[i] = libdevice_apply(fn, a[i * sa], 0) != 0;
        return true;
    }
    double *y = r;
    for (int64_t i = 0; i < n; i++) {
        double p = a[i * sa], q = b[i * sb];
        y[i] = fn == LD_NEXTAFTER ? next_float_after(rt.dtype, p, q) : libdevice_apply(fn, p, q);
    }
    normalize(rt, r, n);
    return true;
}

static bool run_compare(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]);
    int64_t n = type_numel(vtype(in, op->results[0]));
    void *a = operand(in, op, 0);
    void *b = a ? operand(in, op, 1) : NULL;
    int64_t *r = b ? result(in, op) : NULL;
    int64_t sa, sb;
    if (!r || !operand_stride(in, op, 0, n, &sa) || !operand_stride(in, op, 1, n, &sb))
        return false;
    if (is_float_value(at)) {
        /* Ordered compares (false when either is NaN), != unordered (true): C's operators, and
         * Triton's (cmpf oeq/olt/.../une). */
        const double *x = a, *y = b;
        for (int64_t i = 0; i < n; i++) {
            double p = x[i * sa], q = y[i * sb];
            bool v;
            switch (op->code) {
            case OP_CMP_EQ: v = p == q; break;
            case OP_CMP_NE: v = p != q; break;
            case OP_CMP_LT: v = p < q; break;
            case OP_CMP_LE: v = p <= q; break;
            case OP_CMP_GT: v = p > q; break;
            default: v = p >= q; break;
            }
            r[i] = v;
        }
        return true;
    }
    const int64_t *x = a, *y = b;
    bool s = int_signed(at);
    for (int64_t i = 0; i < n; i++) {
        int64_t p = x[i * sa], q = y[i * sb];
        /* Slots hold sign- or zero-extended values, so comparing them as int64 (signed dtypes)
         * or uint64 (unsigned, bools, pointers) compares the dtype's values. */
        int c =
            s ? (p < q ? -1 : p > q) : ((uint64_t)p < (uint64_t)q ? -1 : (uint64_t)p > (uint64_t)q);
        bool v;
        switch (op->code) {
        case OP_CMP_EQ: v = c == 0; break;
        case OP_CMP_NE: v = c != 0; break;
        case OP_CMP_LT: v = c < 0; break;
        case OP_CMP_LE: v = c <= 0; break;
        case OP_CMP_GT: v = c > 0; break;
        default: v = c >= 0; break;
        }
        r[i] = v;
    }
    return true;
}

static bool run_select(Interp *in, const IrOp *op)
{
    int64_t n = type_numel(vtype(in, op->results[0]));
    const int64_t *c = operand(in, op, 0);
    const int64_t *a = c ? operand(in, op, 1) : NULL;
    const int64_t *b = a ? operand(in, op, 2) : NULL;
    int64_t *r = b ? result(in, op) : NULL;
    int64_t sc, sa, sb;
    if (!r || !operand_stride(in, op, 0, n, &sc) || !operand_stride(in, op, 1, n, &sa) ||
        !operand_stride(in, op, 2, n, &sb))
        return false;
    /* Both branches have the result's type, so their 8-byte slots are copied as they are. */
    for (int64_t i = 0; i < n; i++)
        memcpy(&r[i], c[i * sc] ? &a[i * sa] : &b[i * sb], 8);
    return true;
}

/* Converts n elements of type `from` into slots of type `to` (OP_CAST's rules). */
static void convert(Type from, const void *src, int64_t stride, Type to, void *dst, int64_t n)
{
    bool ff = is_float_value(from), tf = is_float_value(to);
    if (ff && tf) {
        const double *x = src;
        double *y = dst;
        /* fp64 -> fp8 goes through fp32, as the GPU's conversions start at fp32 (codegen). */
        bool via_f32 = from.dtype == DT_F64 && dtype_is_fp8(to.dtype);
        for (int64_t i = 0; i < n; i++)
            y[i] = via_f32 ? (double)(float)x[i * stride] : x[i * stride];
        normalize(to, dst, n); /* float -> float: round to nearest even */
    } else if (ff) {
        const double *x = src;
        int64_t *y = dst;
        /* Triton casts to int1 as x != 0 (semantic.py, cast), not by truncation. */
        if (!to.is_ptr && to.dtype == DT_I1)
            for (int64_t i = 0; i < n; i++)
                y[i] = x[i * stride] != 0;
        else
            for (int64_t i = 0; i < n; i++)
                y[i] = float_to_int(x[i * stride], int_bits(to), int_signed(to));
    } else if (tf) {
        const int64_t *x = src;
        double *y = dst;
        bool is_unsigned = !int_signed(from);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = x[i * stride];
            if (to.dtype == DT_F64)
                y[i] = is_unsigned ? (double)(uint64_t)v : (double)v;
            else if (dtype_is_fp8(to.dtype)) /* through fp32, as codegen */
                y[i] = round_to(to.dtype,
                                round_to(DT_F32, int_to_double_for_rounding(v, is_unsigned)));
            else
                y[i] = round_to(to.dtype, int_to_double_for_rounding(v, is_unsigned));
        }
    } else {
        /* int -> int: the slot is already sign- or zero-extended by the source's signedness, so
         * wrapping it to the target's width is sext/zext/trunc; int1 targets are x != 0. */
        const int64_t *x = src;
        int64_t *y = dst;
        bool to_bool = !to.is_ptr && to.dtype == DT_I1;
        for (int64_t i = 0; i < n; i++)
            y[i] = to_bool ? x[i * stride] != 0 : x[i * stride];
        normalize(to, dst, n);
    }
}

static bool run_cast(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt), sa;
    void *a = operand(in, op, 0);
    void *r = a ? result(in, op) : NULL;
    if (!r || !operand_stride(in, op, 0, n, &sa))
        return false;
    convert(vtype(in, op->operands[0]), a, sa, rt, r, n);
    return true;
}

static bool run_bitcast(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]), at = vtype(in, op->operands[0]);
    int64_t n = type_numel(rt), sa;
    void *a = operand(in, op, 0);
    void *r = a ? result(in, op) : NULL;
    if (!r || !operand_stride(in, op, 0, n, &sa))
        return false;
    if (int_bits(at) != int_bits(rt))
        return fail(in, op, "internal error: bitcast between widths %d and %d", int_bits(at),
                    int_bits(rt));
    Codec from = codec_of(at), to = codec_of(rt);
    for (int64_t i = 0; i < n; i++)
        codec_decode(&to, r, i, codec_encode(&from, a, i * sa));
    return true;
}

/* ---- values from nowhere, and shapes ------------------------------------------------------ */

static bool run_const(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt);
    void *r = result(in, op);
    if (!r)
        return false;
    if (is_float_value(rt)) {
        double v = round_to(rt.dtype, op->fattr);
        for (int64_t i = 0; i < n; i++)
            ((double *)r)[i] = v;
    } else {
        int64_t v = !rt.is_ptr && rt.dtype == DT_I1
                        ? op->attr[0] != 0
                        : int_wrap((uint64_t)op->attr[0], int_bits(rt), int_signed(rt));
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)r)[i] = v;
    }
    return true;
}

/* An undef value: NaN, or 0xdeadbeef in every int and pointer element (a pointer no buffer holds),
 * so that an output or a bounds check shows where one is read. */
static bool run_undef(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt);
    void *r = result(in, op);
    if (!r)
        return false;
    for (int64_t i = 0; i < n; i++) {
        if (is_float_value(rt))
            ((double *)r)[i] = NAN;
        else
            ((int64_t *)r)[i] = rt.is_ptr || rt.dtype != DT_I1
                                    ? int_wrap(0xdeadbeefu, int_bits(rt), int_signed(rt))
                                    : 1;
    }
    return true;
}

static bool run_fill_int(Interp *in, const IrOp *op, int64_t v)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt);
    int64_t *r = result(in, op);
    if (!r)
        return false;
    v = int_wrap((uint64_t)v, int_bits(rt), int_signed(rt));
    for (int64_t i = 0; i < n; i++)
        r[i] = v;
    return true;
}

/* r = a with the same elements in the same row-major order (expand_dims, reshape, layout and
 * hint ops, splat of a scalar). */
static bool run_copy(Interp *in, const IrOp *op)
{
    int64_t n = type_numel(vtype(in, op->results[0])), sa;
    void *a = operand(in, op, 0);
    void *r = a ? result(in, op) : NULL;
    if (!r || !operand_stride(in, op, 0, n, &sa))
        return false;
    if (sa)
        memcpy(r, a, (size_t)n * 8);
    else
        for (int64_t i = 0; i < n; i++)
            memcpy((char *)r + i * 8, a, 8);
    return true;
}

/* r[idx] = a[sum idx[d] * stride[d]] over r's shape: broadcast (stride 0 on stretched dims) and
 * trans (permuted strides). */
static void strided_gather(const int64_t *a, int64_t *r, Type rt, const int64_t *stride)
{
    int rank = rt.rank;
    int64_t n = type_numel(rt);
    if (rank == 0) {
        r[0] = a[0];
        return;
    }
    int64_t idx[TRIC_MAX_RANK] = {0};
    int64_t src = 0;
    int last = rank - 1;
    int64_t inner = rt.shape[last], istride = stride[last];
    for (int64_t i = 0; i < n; i += inner) {
        for (int64_t j = 0; j < inner; j++)
            r[i + j] = a[src + j * istride];
        /* advance the outer dims like an odometer */
        for (int d = last - 1; d >= 0; d--) {
            src += stride[d];
            if (++idx[d] < rt.shape[d])
                break;
            src -= stride[d] * rt.shape[d];
            idx[d] = 0;
        }
    }
}

static void row_major_strides(Type t, int64_t *stride)
{
    int64_t s = 1;
    for (int d = t.rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= t.shape[d];
    }
}

static bool run_broadcast(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]), at = vtype(in, op->operands[0]);
    const int64_t *a = operand(in, op, 0);
    int64_t *r = a ? result(in, op) : NULL;
    if (!r)
        return false;
    int64_t astride[TRIC_MAX_RANK], stride[TRIC_MAX_RANK];
    row_major_strides(at, astride);
    /* dims line up from the right (numpy's rule); a missing or size-1 dim repeats */
    for (int d = 0; d < rt.rank; d++) {
        int ad = d - (rt.rank - at.rank);
        if (ad < 0 || at.shape[ad] == 1)
            stride[d] = 0;
        else if (at.shape[ad] == rt.shape[d])
            stride[d] = astride[ad];
        else
            return fail(in, op, "internal error: broadcast of dim %d from %d to %d", d,
                        at.shape[ad], rt.shape[d]);
    }
    strided_gather(a, r, rt, stride); /* slots are 8 bytes: ints and floats alike */
    return true;
}

static bool run_trans(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]), at = vtype(in, op->operands[0]);
    const int64_t *a = operand(in, op, 0);
    int64_t *r = a ? result(in, op) : NULL;
    if (!r)
        return false;
    if (at.rank != rt.rank)
        return fail(in, op, "internal error: trans changes the rank");
    int64_t astride[TRIC_MAX_RANK], stride[TRIC_MAX_RANK];
    row_major_strides(at, astride);
    for (int d = 0; d < rt.rank; d++) {
        int64_t p = op->attr[d];
        if (rt.rank == 2 && op->attr[0] == 0 && op->attr[1] == 0)
            p = 1 - d; /* no perm given: the 2-D transpose */
        if (p < 0 || p >= at.rank || at.shape[p] != rt.shape[d])
            return fail(in, op, "internal error: bad trans permutation");
        stride[d] = astride[p];
    }
    strided_gather(a, r, rt, stride);
    return true;
}

/* join: r[i, k] = (k ? b : a)[i] over the flattened leading dims i (r's minor dim is 2). */
static bool run_join(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]);
    const int64_t *a = operand(in, op, 0);
    const int64_t *b = a ? operand(in, op, 1) : NULL;
    int64_t *r = b ? result(in, op) : NULL;
    if (!r)
        return false;
    int64_t n = type_numel(at);
    for (int64_t i = 0; i < n; i++) {
        r[2 * i] = a[i];
        r[2 * i + 1] = b[i];
    }
    return true;
}

/* split: r[i] = a[i, attr[0]] (a's minor dim is 2). */
static bool run_split(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    const int64_t *a = operand(in, op, 0);
    int64_t *r = a ? result(in, op) : NULL;
    if (!r)
        return false;
    if (op->attr[0] != 0 && op->attr[0] != 1)
        return fail(in, op, "internal error: split half %lld", (long long)op->attr[0]);
    int64_t n = type_numel(rt);
    for (int64_t i = 0; i < n; i++)
        r[i] = a[2 * i + op->attr[0]];
    return true;
}

/* subtile: r[i] = a[offsets + i], row-major indices in each shape. */
static bool run_subtile(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]), at = vtype(in, op->operands[0]);
    const int64_t *a = operand(in, op, 0);
    int64_t *r = a ? result(in, op) : NULL;
    if (!r)
        return false;
    int64_t n = type_numel(rt);
    for (int64_t i = 0; i < n; i++) {
        int64_t rest = i, k = 0, scale = 1;
        for (int d = rt.rank - 1; d >= 0; d--) {
            k += (op->attr[d] + rest % rt.shape[d]) * scale;
            rest /= rt.shape[d];
            scale *= at.shape[d];
        }
        r[i] = a[k];
    }
    return true;
}

/* ---- memory ---------------------------------------------------------------------------------- */

static bool run_addptr(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt), sa, sb;
    const int64_t *p = operand(in, op, 0);
    const int64_t *off = p ? operand(in, op, 1) : NULL;
    int64_t *r = off ? result(in, op) : NULL;
    if (!r || !operand_stride(in, op, 0, n, &sa) || !operand_stride(in, op, 1, n, &sb))
        return false;
    uint64_t size = (uint64_t)dtype_bytes(rt.dtype); /* int1 pointee: one byte */
    for (int64_t i = 0; i < n; i++)
        r[i] = (int64_t)((uint64_t)p[i * sa] + (uint64_t)off[i * sb] * size);
    return true;
}

static uint64_t read_bytes(uint64_t addr, size_t size)
{
    /* Little-endian hosts only (x86-64, aarch64): the low bytes of the uint64 are the value. */
    uint64_t v = 0;
    memcpy(&v, (const void *)(uintptr_t)addr, size);
    return v;
}

/* r[i] = *ptr[i] where mask[i] else other[i] (0 when there is none) for the n elements of rt:
 * the pointers, mask and other are operands first, first + 1, first + 2 (the last two optional).
 * Shared by load and async_copy, whose element semantics are the same. */
static bool gather(Interp *in, const IrOp *op, int first, Type rt, int64_t n, void *r)
{
    int64_t sp, sm = 0, so = 0;
    const int64_t *ptr = operand(in, op, first);
    if (!ptr || !operand_stride(in, op, first, n, &sp))
        return false;
    const int64_t *mask = NULL;
    const void *other = NULL;
    if (has_operand(op, first + 1) &&
        (!(mask = operand(in, op, first + 1)) || !operand_stride(in, op, first + 1, n, &sm)))
        return false;
    if (has_operand(op, first + 2) &&
        (!(other = operand(in, op, first + 2)) || !operand_stride(in, op, first + 2, n, &so)))
        return false;
    size_t size = memory_bytes(rt);
    bool is_bool = !rt.is_ptr && rt.dtype == DT_I1;
    Codec codec = codec_of(rt);
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[i * sm]) {
            /* Masked-off lanes never touch memory; they take `other`, or 0 (Triton leaves them
             * undefined). */
            if (other)
                memcpy((char *)r + i * 8, (const char *)other + i * so * 8, 8);
            else
                memset((char *)r + i * 8, 0, 8);
            continue;
        }
        uint64_t addr = (uint64_t)ptr[i * sp];
        if (find_buffer(in, addr, size) < 0)
            return out_of_bounds(in, op, rt, i, addr, size, false);
        uint64_t bits = read_bytes(addr, size);
        if (is_bool)
            ((int64_t *)r)[i] = bits != 0;
        else
            codec_decode(&codec, r, i, bits);
    }
    return true;
}

static bool run_load(Interp *in, const IrOp *op)
{
    Type rt = vtype(in, op->results[0]);
    void *r = result(in, op);
    return r && gather(in, op, 0, rt, type_numel(rt), r);
}

/* A prefetch changes nothing a program sees; its pointers, where it is on, must lie in the
 * launch's buffers as a load's would (the pass that makes it computes the next tile's addresses:
 * passes/prefetch_tiles.c). */
static bool run_prefetch(Interp *in, const IrOp *op)
{
    Type pt = vtype(in, op->operands[0]);
    int64_t n = type_numel(pt), sp;
    const int64_t *ptr = operand(in, op, 0), *on = operand(in, op, 1);
    if (!ptr || !on || !operand_stride(in, op, 0, n, &sp))
        return false;
    if (!on[0])
        return true;
    Type et = pt;
    et.is_ptr = false;
    et.rank = 0;
    size_t size = memory_bytes(et);
    for (int64_t i = 0; i < n; i++) {
        uint64_t addr = (uint64_t)ptr[i * sp];
        if (find_buffer(in, addr, size) < 0)
            return out_of_bounds(in, op, et, i, addr, size, false);
    }
    return true;
}

static bool run_store(Interp *in, const IrOp *op)
{
    Type pt = vtype(in, op->operands[0]);
    Type vt = has_operand(op, 1) ? vtype(in, op->operands[1]) : pt;
    Type shape = type_numel(pt) >= type_numel(vt) ? pt : vt;
    int64_t n = type_numel(shape), sp, sv, sm = 0;
    const int64_t *ptr = operand(in, op, 0);
    const void *val = ptr ? operand(in, op, 1) : NULL;
    if (!val || !operand_stride(in, op, 0, n, &sp) || !operand_stride(in, op, 1, n, &sv))
        return false;
    const int64_t *mask = NULL;
    if (has_operand(op, 2) && (!(mask = operand(in, op, 2)) || !operand_stride(in, op, 2, n, &sm)))
        return false;
    Type et = pt; /* the pointee decides the bytes written */
    et.is_ptr = false;
    et.rank = 0;
    size_t size = memory_bytes(et);
    if (vt.is_ptr || vt.dtype != et.dtype) {
        /* Lowering casts the value to the pointee; should it not, store the cast value rather
         * than the wrong number of bytes. */
        Type want = vt;
        want.is_ptr = false;
        want.dtype = et.dtype;
        void *t = scratch_get(&in->scratch, &in->scratch_cap, (size_t)type_numel(vt) * 8);
        if (!t)
            return fail(in, op, "out of memory in store");
        convert(vt, val, 1, want, t, type_numel(vt));
        val = t;
        vt = want;
    }
    Codec codec = codec_of(vt);
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[i * sm])
            continue;
        uint64_t addr = (uint64_t)ptr[i * sp];
        int buf = find_buffer(in, addr, size);
        if (buf < 0)
            return out_of_bounds(in, op, shape, i, addr, size, true);
        uint64_t off = addr - in->launch->buffers[buf].addr;
        if (!save_page(in, op, buf, off) || ((off + size - 1) / PAGE_BYTES != off / PAGE_BYTES &&
                                             !save_page(in, op, buf, off + size - 1)))
            return false;
        uint64_t bits = codec_encode(&codec, val, i * sv);
        if (et.dtype == DT_I1)
            bits = bits != 0;
        memcpy((void *)(uintptr_t)addr, &bits, size); /* little-endian: the low bytes */
    }
    return true;
}

/* ---- atomics ---------------------------------------------------------------------------------- */

/* One element's read-modify-write on raw bits: the new bits of `kind` applied to old and val of
 * the pointee type et (ints by signedness, floats rounded to et). */
static uint64_t atomic_apply(AtomicKind kind, Type et, const Codec *codec, uint64_t old,
                             uint64_t val)
{
    if (kind == ATOMIC_XCHG)
        return val;
    if (is_float_value(et)) { /* only add (the verifier) */
        double o = 0, v = 0;
        codec_decode(codec, &o, 0, old);
        codec_decode(codec, &v, 0, val);
        double r = round_to(et.dtype, o + v); /* o + v is exact in double for fp32 and below */
        return codec_encode(codec, &r, 0);
    }
    int64_t o = 0, v = 0;
    codec_decode(codec, &o, 0, old);
    codec_decode(codec, &v, 0, val);
    bool is_signed = int_signed(et);
    int64_t r;
    switch (kind) {
    case ATOMIC_ADD: r = (int64_t)((uint64_t)o + (uint64_t)v); break;
    case ATOMIC_AND: r = o & v; break;
    case ATOMIC_OR: r = o | v; break;
    case ATOMIC_XOR: r = o ^ v; break;
    case ATOMIC_MAX:
    case ATOMIC_MIN: {
        bool less = is_signed ? o < v : (uint64_t)o < (uint64_t)v;
        r = (kind == ATOMIC_MAX) == less ? v : o;
        break;
    }
    default: r = v; break;
    }
    return codec_encode(codec, &r, 0);
}

/* flag_wait: the flag must already hold the value. A persistent launch's programs run from the
 * last to the first, so a program's wait on programs after it (stream_k's owner of a split tile
 * waiting for the pieces after its own) finds them done; a wait that does not hold here is one a
 * GPU could wait on forever. */
static bool run_flag_wait(Interp *in, const IrOp *op)
{
    const int64_t *ptr = operand(in, op, 0), *want = ptr ? operand(in, op, 1) : NULL;
    if (!want)
        return false;
    uint64_t addr = (uint64_t)ptr[0];
    if (find_buffer(in, addr, 4) < 0)
        return out_of_bounds(in, op, vtype(in, op->operands[0]), 0, addr, 4, false);
    int32_t flag;
    memcpy(&flag, (void *)(uintptr_t)addr, 4);
    if (flag != (int32_t)want[0])
        return fail(in, op,
                    "program (%d, %d, %d) waits for the flag at 0x%llx to be %d, but it is %d: "
                    "no program the interpreter ran before it (a persistent launch's run from the "
                    "last) set it, so on a GPU the wait could last forever",
                    in->pid[0], in->pid[1], in->pid[2], (unsigned long long)addr, (int)want[0],
                    flag);
    return true;
}

/* partial_store and partial_add: partial b of the fp32 scratch at a, its elements row-major
 * (codegen chooses another order, by layout; both sides of a partial agree either way). The
 * add rounds to fp32, as an fp32 add does. */
static bool run_partial(Interp *in, const IrOp *op)
{
    const int64_t *base = operand(in, op, 0), *slot = base ? operand(in, op, 1) : NULL;
    const double *tile = slot ? operand(in, op, 2) : NULL;
    if (!tile)
        return false;
    int64_t n = type_numel(vtype(in, op->operands[2]));
    uint64_t addr = (uint64_t)base[0] + (uint64_t)slot[0] * (uint64_t)n * 4;
    int buf = find_buffer(in, addr, (size_t)n * 4);
    if (buf < 0)
        return out_of_bounds(in, op, vtype(in, op->operands[2]), 0, addr, (size_t)n * 4,
                             op->code == OP_PARTIAL_STORE);
    float *mem = (float *)(uintptr_t)addr;
    if (op->code == OP_PARTIAL_STORE) {
        uint64_t off = addr - in->launch->buffers[buf].addr;
        for (uint64_t page = off / PAGE_BYTES; page <= (off + (uint64_t)n * 4 - 1) / PAGE_BYTES;
             page++)
            if (!save_page(in, op, buf, page * PAGE_BYTES))
                return false;
        for (int64_t i = 0; i < n; i++)
            mem[i] = (float)tile[i];
        return true;
    }
    double *r = result(in, op);
    if (!r)
        return false;
    for (int64_t i = 0; i < n; i++)
        r[i] = round_to(DT_F32, tile[i] + (double)mem[i]);
    return true;
}

/* atomic_rmw and atomic_cas: the elements one after the other in row-major order (one program
 * runs at a time, so every lane's atomic sees the ones before it), each returning the bits it
 * found; masked-off lanes touch nothing and return 0. sem and scope change nothing here. */
static bool run_atomic(Interp *in, const IrOp *op)
{
    bool cas = op->code == OP_ATOMIC_CAS;
    Type pt = vtype(in, op->operands[0]);
    Type rt = vtype(in, op->results[0]);
    int64_t n = type_numel(rt), sp, sv, sc = 0, sm = 0;
    const int64_t *ptr = operand(in, op, 0);
    const void *val = ptr ? operand(in, op, cas ? 2 : 1) : NULL;
    const void *cmp = NULL;
    const int64_t *mask = NULL;
    void *r = val ? result(in, op) : NULL;
    if (!r || !operand_stride(in, op, 0, n, &sp) || !operand_stride(in, op, cas ? 2 : 1, n, &sv))
        return false;
    if (cas && (!(cmp = operand(in, op, 1)) || !operand_stride(in, op, 1, n, &sc)))
        return false;
    if (!cas && has_operand(op, 2) &&
        (!(mask = operand(in, op, 2)) || !operand_stride(in, op, 2, n, &sm)))
        return false;
    Type et = type_scalar(pt.dtype);
    size_t size = memory_bytes(et);
    Codec codec = codec_of(et);
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[i * sm]) {
            memset((char *)r + i * 8, 0, 8);
            continue;
        }
        uint64_t addr = (uint64_t)ptr[i * sp];
        int buf = find_buffer(in, addr, size);
        if (buf < 0)
            return out_of_bounds(in, op, rt, i, addr, size, true);
        uint64_t off = addr - in->launch->buffers[buf].addr;
        if (!save_page(in, op, buf, off) || ((off + size - 1) / PAGE_BYTES != off / PAGE_BYTES &&
                                             !save_page(in, op, buf, off + size - 1)))
            return false;
        uint64_t old = read_bytes(addr, size);
        uint64_t v = codec_encode(&codec, val, i * sv), now;
        if (cas)
            now = old == codec_encode(&codec, cmp, i * sc) ? v : old;
        else
            now = atomic_apply((AtomicKind)op->attr[0], et, &codec, old, v);
        memcpy((void *)(uintptr_t)addr, &now, size); /* little-endian: the low bytes */
        codec_decode(&codec, r, i, old);
    }
    return true;
}

/* ---- dot and reductions ----------------------------------------------------------------------- */

/* acc[j] += a * b[j]: each element rounded in fp32 on its own, so the result is the same in any
 * vector width. Unrolled by 8 with restrict pointers so that -O2 (GCC 12's "very cheap"
 * vectorizer) turns the body into SIMD multiplies and adds. */
static void row_multiply_add(float *restrict acc, const float *restrict b, float a, int64_t n)
{
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        acc[j + 0] += a * b[j + 0];
        acc[j + 1] += a * b[j + 1];
        acc[j + 2] += a * b[j + 2];
        acc[j + 3] += a * b[j + 3];
        acc[j + 4] += a * b[j + 4];
        acc[j + 5] += a * b[j + 5];
        acc[j + 6] += a * b[j + 6];
        acc[j + 7] += a * b[j + 7];
    }
    for (; j < n; j++)
        acc[j] += a * b[j];
}

/* r = a @ b + c. fp16/bf16 products are exact in fp32 and are accumulated in fp32, as the
 * tensor cores do (mma.sync ... .f32.f16.f16.f32); fp32 inputs are multiplied in fp32 (the GPU
 * may use tf32 when attr[0] allows it; the interpreter is the more exact of the two); fp64 in
 * double; ints in 64 bits, wrapped to the result. The loop order m, k, n keeps each output's sum
 * in k order (as the hardware's k-steps) while the inner loop runs over contiguous rows. With
 * max_num_imprecise_acc (attr[2] > 0) the sum is promoted as wgmma's is (codegen/dot_wgmma.c):
 * each run of K (ir_promotion_run) is summed from zero, then added into c, so that
 * `c + dot(a, b, 0)` of one run is the same sum, bit for bit, as `dot(a, b, c)` (what
 * passes/defer_promotion.c relies on). */
static bool dot_compute(Interp *in, const IrOp *op, Type at, const void *a, Type bt, const void *b,
                        Type ct, const void *c, Type rt, void *r);

static bool run_dot(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]), bt = vtype(in, op->operands[1]);
    Type rt = vtype(in, op->results[0]), ct = vtype(in, op->operands[2]);
    const void *a = operand(in, op, 0);
    const void *b = a ? operand(in, op, 1) : NULL;
    const void *c = b ? operand(in, op, 2) : NULL;
    void *r = c ? result(in, op) : NULL;
    return r && dot_compute(in, op, at, a, bt, b, ct, c, rt, r);
}

/* The arithmetic of dot and wgmma (whose a and b are slot tiles). */
static bool dot_compute(Interp *in, const IrOp *op, Type at, const void *a, Type bt, const void *b,
                        Type ct, const void *c, Type rt, void *r)
{
    if (at.rank < 2 || at.rank != bt.rank || at.rank != rt.rank || at.rank > 3 ||
        type_numel(ct) != type_numel(rt))
        return fail(in, op, "internal error: dot operand shapes");
    int x = at.rank - 2;
    int64_t batch = x ? at.shape[0] : 1;
    int64_t M = at.shape[x], K = at.shape[x + 1], N = bt.shape[x + 1];
    if (bt.shape[x] != K || rt.shape[x] != M || rt.shape[x + 1] != N)
        return fail(in, op, "internal error: dot of <%lldx%lld> and <%lldx%lld>", (long long)M,
                    (long long)K, (long long)bt.shape[x], (long long)N);
    bool floats = is_float_value(at), c_float = is_float_value(ct);
    bool wide = at.dtype == DT_F64 || bt.dtype == DT_F64 || rt.dtype == DT_F64;
    if (floats && !wide) {
        float *af = scratch_get(&in->scratch, &in->scratch_cap,
                                (size_t)(M * K + K * N + N) * sizeof(float));
        if (!af)
            return fail(in, op, "out of memory in dot");
        float *bf = af + M * K, *acc = bf + K * N;
        int64_t run = op->attr[2] > 0 ? ir_promotion_run(op->attr[2]) : 0;
        float *part = NULL;
        if (run) {
            part = scratch_get(&in->scratch2, &in->scratch2_cap, (size_t)N * sizeof(float));
            if (!part)
                return fail(in, op, "out of memory in dot");
        }
        for (int64_t z = 0; z < batch; z++) {
            const double *ad = (const double *)a + z * M * K, *bd = (const double *)b + z * K * N;
            for (int64_t i = 0; i < M * K; i++)
                af[i] = (float)ad[i];
            for (int64_t i = 0; i < K * N; i++)
                bf[i] = (float)bd[i];
            for (int64_t m = 0; m < M; m++) {
                int64_t row = z * M * N + m * N;
                for (int64_t j = 0; j < N; j++)
                    acc[j] = c_float ? (float)((const double *)c)[row + j]
                                     : (float)((const int64_t *)c)[row + j];
                for (int64_t k0 = 0; run && k0 < K; k0 += run) {
                    memset(part, 0, (size_t)N * sizeof(float));
                    for (int64_t k = k0; k < K && k < k0 + run; k++)
                        row_multiply_add(part, bf + k * N, af[m * K + k], N);
                    for (int64_t j = 0; j < N; j++)
                        acc[j] += part[j];
                }
                for (int64_t k = 0; !run && k < K; k++)
                    row_multiply_add(acc, bf + k * N, af[m * K + k], N);
                for (int64_t j = 0; j < N; j++)
                    ((double *)r)[row + j] = acc[j];
            }
        }
        convert((Type){.dtype = DT_F32}, r, 1, rt, r, type_numel(rt));
    } else if (floats) {
        double *acc = scratch_get(&in->scratch, &in->scratch_cap, (size_t)N * sizeof(double));
        if (!acc)
            return fail(in, op, "out of memory in dot");
        for (int64_t z = 0; z < batch; z++) {
            const double *ad = (const double *)a + z * M * K, *bd = (const double *)b + z * K * N;
            for (int64_t m = 0; m < M; m++) {
                int64_t row = z * M * N + m * N;
                for (int64_t j = 0; j < N; j++)
                    acc[j] = c_float ? ((const double *)c)[row + j]
                                     : (double)((const int64_t *)c)[row + j];
                for (int64_t k = 0; k < K; k++) {
                    double av = ad[m * K + k];
                    for (int64_t j = 0; j < N; j++)
                        acc[j] += av * bd[k * N + j];
                }
                for (int64_t j = 0; j < N; j++)
                    ((double *)r)[row + j] = acc[j];
            }
        }
        convert((Type){.dtype = DT_F64}, r, 1, rt, r, type_numel(rt));
    } else {
        uint64_t *acc = scratch_get(&in->scratch, &in->scratch_cap, (size_t)N * sizeof(uint64_t));
        if (!acc)
            return fail(in, op, "out of memory in dot");
        if (is_float_value(ct) || is_float_value(rt))
            return fail(in, op, "internal error: integer dot with a float accumulator");
        for (int64_t z = 0; z < batch; z++) {
            const int64_t *ad = (const int64_t *)a + z * M * K,
                          *bd = (const int64_t *)b + z * K * N;
            for (int64_t m = 0; m < M; m++) {
                int64_t row = z * M * N + m * N;
                for (int64_t j = 0; j < N; j++)
                    acc[j] = (uint64_t)((const int64_t *)c)[row + j];
                for (int64_t k = 0; k < K; k++) {
                    uint64_t av = (uint64_t)ad[m * K + k];
                    for (int64_t j = 0; j < N; j++)
                        acc[j] += av * (uint64_t)bd[k * N + j];
                }
                for (int64_t j = 0; j < N; j++)
                    ((int64_t *)r)[row + j] = (int64_t)acc[j];
            }
        }
        normalize(rt, r, type_numel(rt));
    }
    return true;
}

/* Reductions along attr[0]: the input seen as [outer][len][inner]. */
static bool reduce_geometry(Interp *in, const IrOp *op, Type at, int64_t *outer, int64_t *len,
                            int64_t *inner)
{
    int64_t axis = op->attr[0];
    if (axis < 0 || axis >= at.rank)
        return fail(in, op, "internal error: %s along axis %lld of a rank-%d value",
                    op_name(op->code), (long long)axis, at.rank);
    *outer = *inner = 1;
    for (int d = 0; d < at.rank; d++) {
        if (d < axis)
            *outer *= at.shape[d];
        else if (d > axis)
            *inner *= at.shape[d];
    }
    *len = at.shape[axis];
    return true;
}

static bool run_reduce(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]), rt = vtype(in, op->results[0]);
    const void *a = operand(in, op, 0);
    void *r = a ? result(in, op) : NULL;
    int64_t outer, len, inner;
    if (!r || !reduce_geometry(in, op, at, &outer, &len, &inner))
        return false;
    int64_t n = outer * len * inner;
    if (type_numel(rt) != outer * inner)
        return fail(in, op, "internal error: %s result size", op_name(op->code));
    /* The sum runs in the result's dtype, as the IR gives it (lowering decides whether fp16
     * sums widen): convert the input first when the dtypes differ. */
    Type et = at;
    et.dtype = rt.dtype;
    et.is_ptr = rt.is_ptr;
    if (at.dtype != rt.dtype || at.is_ptr != rt.is_ptr) {
        void *t = scratch_get(&in->scratch, &in->scratch_cap, (size_t)n * 8);
        if (!t)
            return fail(in, op, "out of memory in %s", op_name(op->code));
        convert(at, a, 1, et, t, n);
        a = t;
    }
    bool isf = is_float_value(rt), s = int_signed(rt);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++)
            memcpy((char *)r + (o * inner + i) * 8, (const char *)a + (o * len * inner + i) * 8, 8);
        for (int64_t j = 1; j < len; j++) {
            int64_t base = (o * len + j) * inner;
            if (isf) {
                double *y = (double *)r + o * inner;
                const double *x = (const double *)a + base;
                for (int64_t i = 0; i < inner; i++) {
                    switch (op->code) {
                    /* fmax/fmin: a NaN is skipped unless every element is NaN, as tl.max's
                     * default propagate_nan=NONE combine (maxnum) */
                    case OP_REDUCE_MAX: y[i] = fmax(y[i], x[i]); break;
                    case OP_REDUCE_MIN: y[i] = fmin(y[i], x[i]); break;
                    default: y[i] = round_to(rt.dtype, y[i] + x[i]); break;
                    }
                }
            } else {
                int64_t *y = (int64_t *)r + o * inner;
                const int64_t *x = (const int64_t *)a + base;
                for (int64_t i = 0; i < inner; i++) {
                    int64_t p = y[i], q = x[i];
                    bool less = s ? q < p : (uint64_t)q < (uint64_t)p;
                    switch (op->code) {
                    case OP_REDUCE_MAX:
                        y[i] = (s ? q > p : (uint64_t)q > (uint64_t)p) ? q : p;
                        break;
                    case OP_REDUCE_MIN: y[i] = less ? q : p; break;
                    default: y[i] = (int64_t)((uint64_t)p + (uint64_t)q); break;
                    }
                }
            }
        }
    }
    normalize(rt, r, outer * inner);
    return true;
}

/* Inclusive scan along attr[0] with the binary op attr[1], from the end when attr[2]: element j
 * is a[0] op a[1] op ... op a[j] (a[j] op ... op a[len-1] reversed), combined in that order.
 * Ints combine in 64 bits and wrap once at the end (add and mul commute with the wrap). */
static bool run_scan(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]), rt = vtype(in, op->results[0]);
    const void *a = operand(in, op, 0);
    void *r = a ? result(in, op) : NULL;
    int64_t outer, len, inner;
    if (!r || !reduce_geometry(in, op, at, &outer, &len, &inner))
        return false;
    OpCode comb = (OpCode)op->attr[1];
    bool rev = op->attr[2] != 0, isf = is_float_value(rt), s = int_signed(rt);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t step = 0; step < len; step++) {
                int64_t j = rev ? len - 1 - step : step;
                int64_t at_j = (o * len + j) * inner + i;
                if (step == 0) {
                    memcpy((char *)r + at_j * 8, (const char *)a + at_j * 8, 8);
                    continue;
                }
                int64_t prev = (o * len + (rev ? j + 1 : j - 1)) * inner + i;
                if (isf) {
                    double p = ((const double *)r)[prev], x = ((const double *)a)[at_j], v;
                    switch (comb) {
                    case OP_ADD: v = round_to(rt.dtype, p + x); break;
                    case OP_MUL: v = round_to(rt.dtype, p * x); break;
                    case OP_MAX: v = fmax(p, x); break;
                    case OP_MIN: v = fmin(p, x); break;
                    default:
                        return fail(in, op, "internal error: scan by %s on floats", op_name(comb));
                    }
                    ((double *)r)[at_j] = v;
                } else {
                    int64_t p = ((const int64_t *)r)[prev], x = ((const int64_t *)a)[at_j], v;
                    switch (comb) {
                    case OP_ADD: v = (int64_t)((uint64_t)p + (uint64_t)x); break;
                    case OP_MUL: v = (int64_t)((uint64_t)p * (uint64_t)x); break;
                    case OP_MAX: v = (s ? x > p : (uint64_t)x > (uint64_t)p) ? x : p; break;
                    case OP_MIN: v = (s ? x < p : (uint64_t)x < (uint64_t)p) ? x : p; break;
                    case OP_AND: v = p & x; break;
                    case OP_OR: v = p | x; break;
                    case OP_XOR: v = p ^ x; break;
                    default: return fail(in, op, "internal error: scan by %s", op_name(comb));
                    }
                    ((int64_t *)r)[at_j] = v;
                    /* max/min read the previous value: keep it wrapped as the dtype */
                    normalize(rt, (int64_t *)r + at_j, 1);
                }
            }
        }
    }
    normalize(rt, r, outer * len * inner);
    return true;
}

/* The index of the first max (min) along attr[0]. NaNs are skipped (as tl.max skips them); a
 * row of NaNs only gives 0. */
static bool run_arg_reduce(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]), rt = vtype(in, op->results[0]);
    const void *a = operand(in, op, 0);
    int64_t *r = a ? result(in, op) : NULL;
    int64_t outer, len, inner;
    if (!r || !reduce_geometry(in, op, at, &outer, &len, &inner))
        return false;
    if (is_float_value(rt))
        return fail(in, op, "internal error: %s gives an integer", op_name(op->code));
    bool want_max = op->code == OP_ARGMAX, isf = is_float_value(at), s = int_signed(at);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t best = -1;
            for (int64_t j = 0; j < len; j++) {
                int64_t k = (o * len + j) * inner + i;
                if (isf) {
                    double v = ((const double *)a)[k];
                    if (isnan(v))
                        continue;
                    double bv = best < 0 ? 0 : ((const double *)a)[(o * len + best) * inner + i];
                    if (best < 0 || (want_max ? v > bv : v < bv))
                        best = j;
                } else {
                    int64_t v = ((const int64_t *)a)[k];
                    int64_t bv = best < 0 ? 0 : ((const int64_t *)a)[(o * len + best) * inner + i];
                    bool better =
                        s ? (want_max ? v > bv : v < bv)
                          : (want_max ? (uint64_t)v > (uint64_t)bv : (uint64_t)v < (uint64_t)bv);
                    if (best < 0 || better)
                        best = j;
                }
            }
            r[o * inner + i] = best < 0 ? 0 : best;
        }
    }
    normalize(rt, r, outer * inner);
    return true;
}

static bool run_assert(Interp *in, const IrOp *op)
{
    Type at = vtype(in, op->operands[0]);
    int64_t n = type_numel(at);
    const void *a = operand(in, op, 0);
    if (!a)
        return false;
    for (int64_t i = 0; i < n; i++) {
        bool ok = is_float_value(at) ? ((const double *)a)[i] != 0 : ((const int64_t *)a)[i] != 0;
        if (!ok) {
            fail(in, op, "assertion failed ");
            print_program(in);
            strbuf_append(in->error, ": ");
            print_element(in->error, at, i);
            strbuf_printf(in->error, ": %s", op->sattr ? op->sattr : "(no message)");
            return false;
        }
    }
    return true;
}

/* ---- control flow ---------------------------------------------------------------------------- */

/* ---- shared memory and the memory pipeline -------------------------------------------------- */

static bool assign_values(Interp *in, const IrOp *op, const ValueId *dst, const ValueId *src,
                          int n);

/* "%a_buf" (the .tri name) or "%12" (the printed number) of a buffer, for messages. */
static void print_buffer_name(Interp *in, ValueId buf)
{
    const char *name = in->f->values[buf].name;
    if (name && name[0]) {
        strbuf_printf(in->error, "%%%s", name);
        return;
    }
    Arena *a = arena_new();
    int32_t *num = ir_value_numbering(in->f, a);
    strbuf_printf(in->error, "%%%d", (int)num[buf]);
    arena_free(a);
}

/* Clears a buffer's books: no copy in flight, no wgmma reading any slot. */
enum { BOOKS_ARRAYS = 9 };

static void books_clear(SmemBooks *b)
{
    for (int64_t s = 0; s < b->nslots; s++) {
        b->copy_group[s] = b->wgmma_read[s] = b->tma_bar[s] = b->mb_waited[s] = -1;
        b->tma_bar_slot[s] = b->tma_phase[s] = 0;
        b->mb_arrived[s] = b->mb_tx[s] = b->mb_completed[s] = 0;
    }
}

/* Before mbarriers are retired or made again: a slot whose tma_load completed on one of them
 * and was waited for holds its tile for good (a loop-invariant tile, loaded and waited once before
 * the first of two loops that read it, stays readable after the first loop retires its
 * mbarriers); its books stop naming the mbarrier. A copy not yet waited for keeps naming it, so a
 * read of it is still reported. */
static void forget_waited_copies(Interp *in, ValueId bars)
{
    const SmemBooks *bar = &in->books[bars];
    for (ValueId v = 1; v < in->f->nvalues; v++) {
        SmemBooks *b = &in->books[v];
        for (int64_t s = 0; b->copy_group && s < b->nslots; s++)
            if (b->tma_bar[s] == bars && bar->mb_waited[b->tma_bar_slot[s]] >= b->tma_phase[s])
                b->tma_bar[s] = -1;
    }
}

/* local_alloc: the buffer's S * tile elements (zeroed, so that a run is deterministic; the GPU
 * leaves them undefined) and fresh books. */
static bool run_local_alloc(Interp *in, const IrOp *op)
{
    Type t = vtype(in, op->results[0]);
    if (!t.is_smem || t.rank < 2)
        return fail(in, op, "internal error: local_alloc of %s", type_str(in->f->arena, t));
    void *r = result(in, op);
    if (!r)
        return false;
    memset(r, 0, (size_t)type_numel(t) * 8);
    SmemBooks *b = &in->books[op->results[0]];
    if (!b->copy_group) {
        b->nslots = t.shape[0];
        b->copy_group = malloc((size_t)b->nslots * BOOKS_ARRAYS * sizeof(int64_t));
        if (!b->copy_group)
            return fail(in, op, "out of memory for a shared buffer's books");
        int64_t **arrays[BOOKS_ARRAYS - 1] = {&b->wgmma_read,   &b->tma_bar,    &b->tma_bar_slot,
                                              &b->tma_phase,    &b->mb_arrived, &b->mb_tx,
                                              &b->mb_completed, &b->mb_waited};
        for (int i = 0; i < BOOKS_ARRAYS - 1; i++)
            *arrays[i] = b->copy_group + (i + 1) * b->nslots;
    }
    books_clear(b);
    return true;
}

/* slot: the view is [buffer value id, slot index]; the index is checked against S. */
static bool run_slot(Interp *in, const IrOp *op)
{
    ValueId buf = op->operands[0];
    const IrOp *def = in->f->values[buf].def;
    if (!def || def->code != OP_LOCAL_ALLOC)
        return fail(in, op, "internal error: slot of a value that is not a local_alloc buffer");
    const int64_t *idx = operand(in, op, 1);
    if (!idx || !operand(in, op, 0))
        return false;
    int64_t *r = result(in, op);
    if (!r)
        return false;
    int64_t nslots = vtype(in, buf).shape[0];
    if (idx[0] < 0 || idx[0] >= nslots) {
        fail(in, op, "slot index %lld is outside the %lld slots of ", (long long)idx[0],
             (long long)nslots);
        print_buffer_name(in, buf);
        strbuf_append(in->error, ", ");
        print_program(in);
        return false;
    }
    r[0] = buf;
    r[1] = idx[0];
    return true;
}

/* The slot a view operand names: its buffer, slot index and the tile's elements. */
static void *view_tile(Interp *in, const IrOp *op, int i, ValueId *buf, int64_t *slot)
{
    ValueId v = i < op->noperands ? op->operands[i] : 0;
    const IrOp *def = v > 0 && v < in->f->nvalues ? in->f->values[v].def : NULL;
    if (!def || def->code != OP_SLOT || !vtype(in, v).is_smem) {
        fail(in, op, "internal error: operand %d of %s is not a slot view", i, op_name(op->code));
        return NULL;
    }
    const int64_t *view = operand(in, op, i);
    if (!view)
        return NULL;
    *buf = (ValueId)view[0];
    *slot = view[1];
    char *data = in->slots[*buf].data;
    if (!data) {
        fail(in, op, "internal error: operand %d of %s views a buffer not allocated yet", i,
             op_name(op->code));
        return NULL;
    }
    return data + *slot * type_numel(vtype(in, v)) * 8;
}

/* A read of a slot (local_load, wgmma) must come after an async_wait retired its last copy. */
static bool check_slot_read(Interp *in, const IrOp *op, ValueId buf, int64_t slot)
{
    const SmemBooks *bk = &in->books[buf];
    if (bk->tma_bar[slot] >= 0) {
        const SmemBooks *bar = &in->books[bk->tma_bar[slot]];
        if (bar->mb_waited[bk->tma_bar_slot[slot]] >= bk->tma_phase[slot])
            return true;
        fail(in, op, "%s reads slot %lld of ", op_name(op->code), (long long)slot);
        print_buffer_name(in, buf);
        strbuf_printf(in->error,
                      " before waiting for phase %lld of the mbarrier its tma_load completes on "
                      "(missing mbar_wait), ",
                      (long long)bk->tma_phase[slot]);
        print_program(in);
        return false;
    }
    int64_t g = in->books[buf].copy_group[slot];
    if (g < 0 || g < in->groups_done)
        return true;
    fail(in, op, "%s reads slot %lld of ", op_name(op->code), (long long)slot);
    print_buffer_name(in, buf);
    strbuf_printf(in->error, " before the async copy into it completed (missing %s), ",
                  g >= in->commits ? "async_commit and async_wait" : "async_wait");
    print_program(in);
    return false;
}

/* A copy (async_copy, tma_load) may not overwrite a slot a wgmma not yet retired reads. */
static bool check_slot_free(Interp *in, const IrOp *op, ValueId buf, int64_t slot)
{
    if (in->books[buf].wgmma_read[slot] < in->wgmmas_done)
        return true;
    fail(in, op, "%s overwrites slot %lld of ", op_name(op->code), (long long)slot);
    print_buffer_name(in, buf);
    strbuf_append(in->error,
                  " while a wgmma that reads it is still running (missing wgmma_wait), ");
    print_program(in);
    return false;
}

/* async_copy: view a = *b where mask else other (0), at once; the copy joins the open group. */
static bool run_async_copy(Interp *in, const IrOp *op)
{
    ValueId buf;
    int64_t slot;
    void *r = view_tile(in, op, 0, &buf, &slot);
    if (!r)
        return false;
    SmemBooks *books = &in->books[buf];
    if (!check_slot_free(in, op, buf, slot))
        return false;
    Type pt = vtype(in, op->operands[1]);
    Type rt = pt; /* the tile, by the pointee */
    rt.is_ptr = false;
    int64_t n = type_numel(pt);
    if (type_numel(vtype(in, op->operands[0])) != n)
        return fail(in, op, "internal error: async_copy of %lld pointers into a tile of %lld",
                    (long long)n, (long long)type_numel(vtype(in, op->operands[0])));
    if (!gather(in, op, 1, rt, n, r))
        return false;
    books->copy_group[slot] = in->commits; /* closed by the next async_commit */
    books->tma_bar[slot] = -1;
    return true;
}

/* ---- mbarriers and TMA copies (PTX ISA 9.7.13.15, mbarrier; 9.7.9.27, cp.async.bulk.tensor) ----
 * Everything completes at once here, so a phase completes as soon as its one arrival has come and
 * the bytes it announced have all been copied; a wait for a phase that has not completed would
 * wait forever on the GPU too (nothing else is left to complete it): an error. */

/* The mbarrier a view operand names: its buffer's books and the slot. */
static SmemBooks *barrier_of(Interp *in, const IrOp *op, int i, int64_t *slot)
{
    const int64_t *view = operand(in, op, i);
    if (!view)
        return NULL;
    *slot = view[1];
    return &in->books[view[0]];
}

static void barrier_progress(SmemBooks *b, int64_t s)
{
    if (b->mb_arrived[s] && b->mb_tx[s] == 0) {
        b->mb_completed[s]++;
        b->mb_arrived[s] = 0;
    }
}

static bool run_mbar_expect(Interp *in, const IrOp *op)
{
    const int64_t *pred = operand(in, op, 1);
    int64_t s;
    SmemBooks *b = pred ? barrier_of(in, op, 0, &s) : NULL;
    if (!b)
        return false;
    if (!pred[0])
        return true;
    if (b->mb_arrived[s])
        return fail(in, op,
                    "internal error: a second arrival on an mbarrier phase that counts one");
    b->mb_arrived[s] = 1;
    b->mb_tx[s] += op->attr[0];
    barrier_progress(b, s);
    return true;
}

/* mbar_arrive: the partition's threads arrive at once (one program's view): the phase
 * completes, as mbar_init counted exactly them. */
static bool run_mbar_arrive(Interp *in, const IrOp *op)
{
    int64_t s;
    SmemBooks *b = barrier_of(in, op, 0, &s);
    if (!b)
        return false;
    if (b->mb_arrived[s])
        return fail(in, op, "internal error: a second arrival on an mbarrier phase");
    b->mb_arrived[s] = 1;
    barrier_progress(b, s);
    return true;
}

static bool run_mbar_wait(Interp *in, const IrOp *op)
{
    const int64_t *parity = operand(in, op, 1);
    int64_t s;
    SmemBooks *b = parity ? barrier_of(in, op, 0, &s) : NULL;
    if (!b)
        return false;
    int64_t done = b->mb_completed[s];
    /* try_wait.parity P returns once the phase of parity P is complete: the current phase
     * (number done) is open, so P must be the parity of phase done - 1; on a fresh mbarrier
     * that is parity 1, the phase "before" the first, which counts as complete (a producer's
     * first wait for a slot no consumer has freed yet, PTX ISA 9.7.13.15.16) */
    if ((done & 1) == (parity[0] & 1)) {
        fail(in, op,
             "mbar_wait waits for a phase of parity %lld of an mbarrier that has completed %lld "
             "phase%s (%s): it would wait forever, ",
             (long long)parity[0], (long long)done, done == 1 ? "" : "s",
             b->mb_arrived[s] ? "bytes announced but not copied" : "no arrival for the next one");
        print_program(in);
        return false;
    }
    b->mb_waited[s] = done - 1;
    return true;
}

/* An integer known at launch (ir.h, LaunchValue) from the launch's arguments; unbounded is
 * INT64_MAX. */
static int64_t launch_value(Interp *in, const LaunchValue *v)
{
    if (v->unbounded)
        return INT64_MAX;
    int64_t x = v->constant;
    for (int i = 0; i < v->nparams; i++) {
        const int64_t *pv = value_storage(in, NULL, in->f->params[v->params[i]].value);
        x *= pv ? pv[0] : 0;
    }
    return x;
}

/* A tensor map's box at an op's coordinates (operands first..): where each element of a 2-d tile
 * goes, the tile's dim `inner` along the map's dim 0 and its other dim along dim 1. */
typedef struct TmaBox {
    const TensorMap *m;
    int inner;
    int64_t coord[TRIC_TMAP_MAX_RANK], dims[TRIC_TMAP_MAX_RANK], strides[TRIC_TMAP_MAX_RANK];
    uint64_t base;
    size_t size; /* bytes an element */
} TmaBox;

static bool tma_box(Interp *in, const IrOp *op, int first, int inner, TmaBox *box)
{
    const IrFunc *f = in->f;
    box->m = &f->tmaps[op->attr[0]];
    box->inner = inner;
    for (int d = 0; d < box->m->rank; d++) {
        const int64_t *c = operand(in, op, first + d);
        if (!c)
            return false;
        box->coord[d] = c[0];
        box->dims[d] = launch_value(in, &box->m->dims[d]);
        box->strides[d] = launch_value(in, &box->m->strides[d]);
    }
    const int64_t *base = value_storage(in, NULL, f->params[box->m->base_param].value);
    if (!base)
        return false;
    box->base = (uint64_t)base[0];
    box->size = memory_bytes(type_scalar(box->m->dtype));
    return true;
}

/* The address of the tile's element (i, j) in the box; false when it lies outside the map's
 * dims. */
static bool tma_box_element(const TmaBox *box, int64_t i, int64_t j, uint64_t *addr)
{
    int64_t x[TRIC_TMAP_MAX_RANK];
    memcpy(x, box->coord, sizeof x);
    x[0] += box->inner == 1 ? j : i;
    x[1] += box->inner == 1 ? i : j;
    bool inside = true;
    int64_t off = 0;
    for (int d = 0; d < box->m->rank; d++) {
        inside &= x[d] >= 0 && x[d] < box->dims[d];
        off += x[d] * box->strides[d];
    }
    *addr = box->base + (uint64_t)(off * (int64_t)box->size);
    return inside;
}

/* tma_load: the box of the tensor map at the coordinates into the view at once, zero outside
 * the map's dims; the copy's bytes complete on the mbarrier. The view's contiguous dim (its
 * #shared order[0]) runs along the map's dim 0, its other dim along dim 1. */
static bool run_tma_load(Interp *in, const IrOp *op)
{
    const IrFunc *f = in->f;
    const int64_t *pred = operand(in, op, 1);
    if (!pred)
        return false;
    if (!pred[0])
        return true;
    ValueId buf;
    int64_t slot, bslot;
    int64_t *tile = view_tile(in, op, 0, &buf, &slot);
    SmemBooks *bar = tile ? barrier_of(in, op, 2, &bslot) : NULL;
    if (!bar)
        return false;
    SmemBooks *books = &in->books[buf];
    if (!check_slot_free(in, op, buf, slot))
        return false;
    Type vt = vtype(in, op->operands[0]);
    int lay = f->values[op->operands[0]].layout;
    int inner =
        lay > 0 && f->layouts[lay].kind == LAYOUT_SHARED ? f->layouts[lay].shared.order[0] : 1;
    TmaBox box;
    if (!tma_box(in, op, 3, inner, &box))
        return false;
    Type et = type_scalar(box.m->dtype);
    Codec codec = codec_of(et);
    int64_t cols = vt.shape[1];
    for (int64_t i = 0; i < vt.shape[0]; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t e = i * cols + j;
            uint64_t addr;
            if (!tma_box_element(&box, i, j, &addr)) {
                tile[e] = 0;
                continue;
            }
            if (find_buffer(in, addr, box.size) < 0)
                return out_of_bounds(in, op, et, e, addr, box.size, false);
            codec_decode(&codec, tile, e, read_bytes(addr, box.size));
        }
    books->copy_group[slot] = -1;
    books->tma_bar[slot] = (int64_t)(bar - in->books);
    books->tma_bar_slot[slot] = bslot;
    books->tma_phase[slot] = bar->mb_completed[bslot];
    bar->mb_tx[bslot] -= type_numel(vt) * (int64_t)box.size;
    barrier_progress(bar, bslot);
    return true;
}

/* tma_store: the tile into the box of the tensor map at the coordinates, elements outside the
 * map's dims not written (as TMA clips them). The tile's dim attr[1] runs along the map's dim 0,
 * its other dim along dim 1. The copy has read the tile when the op ends (codegen waits), and
 * its writes are this program's like a store's. */
static bool run_tma_store(Interp *in, const IrOp *op)
{
    const int64_t *pred = operand(in, op, 1);
    if (!pred)
        return false;
    if (!pred[0])
        return true;
    const void *val = operand(in, op, 0);
    TmaBox box;
    if (!val || !tma_box(in, op, 2, (int)op->attr[1], &box))
        return false;
    Type vt = vtype(in, op->operands[0]);
    Codec codec = codec_of(vt);
    int64_t cols = vt.shape[1];
    for (int64_t i = 0; i < vt.shape[0]; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t e = i * cols + j;
            uint64_t addr;
            if (!tma_box_element(&box, i, j, &addr))
                continue;
            int buf = find_buffer(in, addr, box.size);
            if (buf < 0)
                return out_of_bounds(in, op, vt, e, addr, box.size, true);
            uint64_t boff = addr - in->launch->buffers[buf].addr;
            if (!save_page(in, op, buf, boff) ||
                ((boff + box.size - 1) / PAGE_BYTES != boff / PAGE_BYTES &&
                 !save_page(in, op, buf, boff + box.size - 1)))
                return false;
            uint64_t bits = codec_encode(&codec, val, e);
            memcpy((void *)(uintptr_t)addr, &bits, box.size); /* little-endian: the low bytes */
        }
    return true;
}

static bool run_local_load(Interp *in, const IrOp *op)
{
    ValueId buf;
    int64_t slot;
    const void *tile = view_tile(in, op, 0, &buf, &slot);
    if (!tile || !check_slot_read(in, op, buf, slot))
        return false;
    int64_t n = type_numel(vtype(in, op->results[0]));
    if (n != type_numel(vtype(in, op->operands[0])))
        return fail(in, op, "internal error: local_load into a result of another size");
    void *r = result(in, op);
    if (!r)
        return false;
    memcpy(r, tile, (size_t)n * 8);
    return true;
}

/* wgmma's arithmetic: r = a @ b + c at once, with dot's; a and b's slots are marked read by
 * wgmma number in->wgmmas (an async_copy into them is an error until a wait retires it). */
static bool wgmma_compute(Interp *in, const IrOp *op)
{
    ValueId abuf = 0, bbuf;
    int64_t aslot = 0, bslot;
    /* A is a slot view, or registers (wgmma's A-from-registers form) */
    bool a_regs = !vtype(in, op->operands[0]).is_smem;
    const void *a = a_regs ? operand(in, op, 0) : view_tile(in, op, 0, &abuf, &aslot);
    const void *b = a ? view_tile(in, op, 1, &bbuf, &bslot) : NULL;
    if (!b || (!a_regs && !check_slot_read(in, op, abuf, aslot)) ||
        !check_slot_read(in, op, bbuf, bslot))
        return false;
    const void *c = operand(in, op, 2);
    void *r = c ? result(in, op) : NULL;
    Type bt = vtype(in, op->operands[1]);
    uint64_t *bT = NULL;
    if (r && op->attr[1] && bt.rank == 2) {
        /* trans_b: the view holds B^T [N, K]; the dot reads B [K, N] (8-byte elements) */
        int64_t n = bt.shape[0], k = bt.shape[1];
        bT = malloc(sizeof(uint64_t) * (size_t)(n * k));
        if (!bT)
            return fail(in, op, "out of memory");
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++)
                bT[j * n + i] = ((const uint64_t *)b)[i * k + j];
        bt.shape[0] = (int32_t)k;
        bt.shape[1] = (int32_t)n;
        b = bT;
    }
    bool ok = r && dot_compute(in, op, vtype(in, op->operands[0]), a, bt, b,
                               vtype(in, op->operands[2]), c, vtype(in, op->results[0]), r);
    free(bT);
    if (!ok)
        return false;
    if (!a_regs)
        in->books[abuf].wgmma_read[aslot] = in->wgmmas;
    in->books[bbuf].wgmma_read[bslot] = in->wgmmas;
    return true;
}

/* wgmma: r = a @ b + c (wgmma_compute), running until a wgmma_wait retires it. Guarded off (a
 * fourth operand, false): r = c, nothing read, and it still counts as a group for wgmma_wait. */
static bool run_wgmma(Interp *in, const IrOp *op)
{
    const int64_t *guard = op->noperands > 3 ? operand(in, op, 3) : NULL;
    if (op->noperands > 3 && !guard)
        return false;
    bool issued = !guard || guard[0];
    if (issued ? !wgmma_compute(in, op) : !assign_values(in, op, op->results, &op->operands[2], 1))
        return false;
    in->slots[op->results[0]].wgmma_running = in->wgmmas + 1;
    in->wgmmas++;
    return true;
}

/* wgmma_wait: results = operands; all but the newest attr[0] wgmmas are retired. */
static bool run_wgmma_wait(Interp *in, const IrOp *op)
{
    if (op->nresults != op->noperands)
        return fail(in, op, "internal error: wgmma_wait with %d operands and %d results",
                    op->noperands, op->nresults);
    if (!assign_values(in, op, op->results, op->operands, op->noperands))
        return false;
    int64_t done = in->wgmmas - (op->attr[0] > 0 ? op->attr[0] : 0);
    if (done > in->wgmmas_done)
        in->wgmmas_done = done;
    for (int i = 0; i < op->nresults; i++) { /* retired: its registers may be read now */
        Slot *s = &in->slots[op->results[i]];
        if (s->wgmma_running && s->wgmma_running - 1 < in->wgmmas_done)
            s->wgmma_running = 0;
    }
    return true;
}

/* async_wait: all but the newest attr[0] committed groups are complete. */
static void run_async_wait(Interp *in, const IrOp *op)
{
    int64_t done = in->commits - (op->attr[0] > 0 ? op->attr[0] : 0);
    if (done > in->groups_done)
        in->groups_done = done;
}

/* Each program starts with no copy and no wgmma in flight. */
static void pipeline_reset(Interp *in)
{
    in->commits = in->groups_done = in->wgmmas = in->wgmmas_done = 0;
    for (int v = 0; v < in->f->nvalues; v++)
        if (in->books[v].copy_group)
            books_clear(&in->books[v]);
}

static bool run_op(Interp *in, const IrOp *op);

/* Runs a region's ops up to its terminator (yield or condition), returned in *term (NULL when the
 * region simply ends). */
static bool run_region(Interp *in, const IrRegion *r, const IrOp **term)
{
    *term = NULL;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_YIELD || op->code == OP_CONDITION) {
            *term = op;
            return true;
        }
        if (!run_op(in, op))
            return false;
    }
    return true;
}

/* dst[i] = src[i] for n values at once: through scratch, because a yield may pass a loop's
 * region args around in any order (yield %b, %a). */
static bool assign_values(Interp *in, const IrOp *op, const ValueId *dst, const ValueId *src, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        Slot *s = &in->slots[src[i]];
        if (!s->data)
            return fail(in, op, "internal error: %s passes a value not computed yet",
                        op_name(op->code));
        if (type_numel(vtype(in, dst[i])) != s->n ||
            is_float_value(vtype(in, dst[i])) != is_float_value(vtype(in, src[i])))
            return fail(in, op, "internal error: %s passes a value of another type",
                        op_name(op->code));
        total += (size_t)s->n * 8;
    }
    unsigned char *t = scratch_get(&in->scratch2, &in->scratch2_cap, total ? total : 1);
    if (!t)
        return fail(in, op, "out of memory");
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        memcpy(t + at, in->slots[src[i]].data, (size_t)in->slots[src[i]].n * 8);
        at += (size_t)in->slots[src[i]].n * 8;
    }
    at = 0;
    int64_t *running =
        scratch_get(&in->scratch3, &in->scratch3_cap, sizeof(int64_t) * (size_t)(n + 1));
    if (!running)
        return fail(in, op, "out of memory");
    for (int i = 0; i < n; i++)
        running[i] = in->slots[src[i]].wgmma_running;
    for (int i = 0; i < n; i++) {
        void *d = value_storage(in, op, dst[i]);
        if (!d)
            return false;
        memcpy(d, t + at, (size_t)in->slots[dst[i]].n * 8);
        at += (size_t)in->slots[dst[i]].n * 8;
        in->slots[dst[i]].wgmma_running = running[i];
    }
    return true;
}

static bool expect_terminator(Interp *in, const IrOp *op, const IrOp *term, OpCode code,
                              int nvalues)
{
    if (!term && nvalues == 0)
        return true;
    if (!term || term->code != code || term->noperands != nvalues)
        return fail(in, op, "internal error: a %s region must end in %s with %d values",
                    op_name(op->code), op_name(code), nvalues);
    return true;
}

static int64_t scalar_int(Interp *in, ValueId v) { return ((const int64_t *)in->slots[v].data)[0]; }

/* for iv in range(lo, hi, step): Python's range, negative steps included; the trip count is
 * computed first, so iv never overflows its dtype. */
static bool run_for(Interp *in, const IrOp *op)
{
    if (op->noperands < 3 || op->nregions < 1)
        return fail(in, op, "internal error: malformed for");
    for (int i = 0; i < op->noperands; i++)
        if (!operand(in, op, i))
            return false;
    int niter = op->noperands - 3;
    const IrRegion *body = &op->regions[0];
    if (body->nargs != niter + 1 || op->nresults != niter)
        return fail(in, op, "internal error: for with %d iter args, %d region args, %d results",
                    niter, body->nargs, op->nresults);
    int64_t lo = scalar_int(in, op->operands[0]), hi = scalar_int(in, op->operands[1]);
    int64_t step = scalar_int(in, op->operands[2]);
    if (step == 0) {
        fail(in, op, "for loop with step 0 ");
        print_program(in);
        return false;
    }
    /* trips = ceil((hi - lo) / step) when positive, in uint64 so that no span overflows; the
     * bounds compare by the induction variable's signedness. */
    Type argt = vtype(in, body->args[0]);
    bool uns = !int_signed(vtype(in, op->operands[0]));
    uint64_t trips = 0;
    if (step > 0 && (uns ? (uint64_t)hi > (uint64_t)lo : hi > lo))
        trips = ((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step + 1;
    else if (step < 0 && (uns ? (uint64_t)lo > (uint64_t)hi : lo > hi))
        trips = ((uint64_t)lo - (uint64_t)hi - 1) / ((uint64_t)0 - (uint64_t)step) + 1;
    /* results start as the inits, so zero trips need no special case */
    if (!assign_values(in, op, op->results, op->operands + 3, niter))
        return false;
    for (uint64_t t = 0; t < trips; t++) {
        int64_t *iv = value_storage(in, op, body->args[0]);
        if (!iv)
            return false;
        /* lo + t * step stays between lo and hi, so the wrapped uint64 sum is the true value */
        iv[0] = int_wrap((uint64_t)lo + t * (uint64_t)step, int_bits(argt), int_signed(argt));
        if (!assign_values(in, op, body->args + 1, op->results, niter))
            return false;
        const IrOp *term;
        if (!run_region(in, body, &term) || !expect_terminator(in, op, term, OP_YIELD, niter))
            return false;
        if (niter && !assign_values(in, term, op->results, term->operands, niter))
            return false;
    }
    return true;
}

static bool run_if(Interp *in, const IrOp *op)
{
    const int64_t *c = operand(in, op, 0);
    if (!c)
        return false;
    if (op->nregions < 1)
        return fail(in, op, "internal error: if without regions");
    bool taken =
        is_float_value(vtype(in, op->operands[0])) ? ((const double *)c)[0] != 0 : c[0] != 0;
    if (!taken && op->nregions < 2) {
        if (op->nresults)
            return fail(in, op, "internal error: if with results has no else");
        return true;
    }
    const IrRegion *r = &op->regions[taken ? 0 : 1];
    const IrOp *term;
    if (!run_region(in, r, &term) || !expect_terminator(in, op, term, OP_YIELD, op->nresults))
        return false;
    return op->nresults == 0 || assign_values(in, term, op->results, term->operands, op->nresults);
}

/* while: region 0 (args = the loop's values) computes the condition and ends in
 * condition(c, vals); when c holds, region 1 (args = vals) runs and yields the next values. No
 * iteration limit: a kernel may loop long. */
static bool run_while(Interp *in, const IrOp *op)
{
    if (op->nregions < 2)
        return fail(in, op, "internal error: while without two regions");
    const IrRegion *before = &op->regions[0], *after = &op->regions[1];
    for (int i = 0; i < op->noperands; i++)
        if (!operand(in, op, i))
            return false;
    if (before->nargs != op->noperands)
        return fail(in, op, "internal error: while with %d inits and %d region args", op->noperands,
                    before->nargs);
    if (!assign_values(in, op, before->args, op->operands, op->noperands))
        return false;
    for (;;) {
        const IrOp *cond;
        if (!run_region(in, before, &cond))
            return false;
        if (!cond || cond->code != OP_CONDITION || cond->noperands < 1 ||
            cond->noperands - 1 != op->nresults || after->nargs != op->nresults)
            return fail(in, op, "internal error: malformed while condition");
        const int64_t *c = in->slots[cond->operands[0]].data;
        if (!c)
            return fail(in, cond, "internal error: condition not computed");
        if (!c[0])
            return assign_values(in, cond, op->results, cond->operands + 1, op->nresults);
        if (!assign_values(in, cond, after->args, cond->operands + 1, op->nresults))
            return false;
        const IrOp *yield;
        if (!run_region(in, after, &yield) ||
            !expect_terminator(in, op, yield, OP_YIELD, before->nargs))
            return false;
        if (before->nargs &&
            !assign_values(in, yield, before->args, yield->operands, before->nargs))
            return false;
    }
}

static bool run_op(Interp *in, const IrOp *op)
{
    switch (op->code) {
    case OP_CONST: return run_const(in, op);
    case OP_UNDEF: return run_undef(in, op);
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
        if (op->attr[0] < 0 || op->attr[0] > 2)
            return fail(in, op, "internal error: %s axis %lld", op_name(op->code),
                        (long long)op->attr[0]);
        return run_fill_int(in, op,
                            op->code == OP_PROGRAM_ID ? in->pid[op->attr[0]]
                                                      : in->launch->grid[op->attr[0]]);
    case OP_TILE_COUNT:
        if (op->attr[0] < 0 || op->attr[0] > 2)
            return fail(in, op, "tile_count of axis %lld (0, 1 or 2)", (long long)op->attr[0]);
        return run_fill_int(in, op, in->tiles[op->attr[0]]);
    case OP_CONSUMER_TURN: return run_fill_int(in, op, 1); /* every warp is this program */
    case OP_TURN_WAIT:
    case OP_TURN_PASS: return true; /* one program runs its tiles in order */
    case OP_WORKSPACE:
        return run_fill_int(in, op,
                            (int64_t)(op->attr[0] == 0 ? in->workspace : in->workspace_scratch));
    case OP_MAKE_RANGE: {
        int64_t n = type_numel(vtype(in, op->results[0]));
        int64_t *r = result(in, op);
        if (!r)
            return false;
        for (int64_t i = 0; i < n; i++)
            r[i] = op->attr[0] + i;
        normalize(vtype(in, op->results[0]), r, n);
        return true;
    }
    case OP_SPLAT:
    case OP_EXPAND_DIMS:
    case OP_RESHAPE:
    case OP_CONVERT_LAYOUT:
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS: return run_copy(in, op);
    case OP_BROADCAST: return run_broadcast(in, op);
    case OP_TRANS: return run_trans(in, op);
    case OP_JOIN: return run_join(in, op);
    case OP_SPLIT: return run_split(in, op);
    case OP_SUBTILE: return run_subtile(in, op);
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
    case OP_REM:
    case OP_MIN:
    case OP_MAX:
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_SHL:
    case OP_SHR:
    case OP_UMULHI: return run_binary(in, op);
    case OP_FMA: return run_fma(in, op);
    case OP_NEG:
    case OP_NOT:
    case OP_EXP:
    case OP_EXP2:
    case OP_LOG:
    case OP_LOG2:
    case OP_SQRT:
    case OP_RSQRT:
    case OP_ABS:
    case OP_SIN:
    case OP_COS:
    case OP_FLOOR:
    case OP_CEIL: return run_unary(in, op);
    case OP_LIBDEVICE: return run_libdevice(in, op);
    case OP_CMP_EQ:
    case OP_CMP_NE:
    case OP_CMP_LT:
    case OP_CMP_LE:
    case OP_CMP_GT:
    case OP_CMP_GE: return run_compare(in, op);
    case OP_SELECT: return run_select(in, op);
    case OP_CAST: return run_cast(in, op);
    case OP_BITCAST: return run_bitcast(in, op);
    case OP_ADDPTR: return run_addptr(in, op);
    case OP_LOAD: return run_load(in, op);
    case OP_STORE: return run_store(in, op);
    case OP_PREFETCH: return run_prefetch(in, op);
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS: return run_atomic(in, op);
    case OP_FLAG_WAIT: return run_flag_wait(in, op);
    case OP_PARTIAL_STORE:
    case OP_PARTIAL_ADD: return run_partial(in, op);
    case OP_DOT: return run_dot(in, op);
    case OP_REDUCE_SUM:
    case OP_REDUCE_MAX:
    case OP_REDUCE_MIN: return run_reduce(in, op);
    case OP_SCAN: return run_scan(in, op);
    case OP_ARGMAX:
    case OP_ARGMIN: return run_arg_reduce(in, op);
    case OP_ASSERT: return run_assert(in, op);
    case OP_LOCAL_ALLOC: return run_local_alloc(in, op);
    case OP_SLOT: return run_slot(in, op);
    case OP_ASYNC_COPY: return run_async_copy(in, op);
    case OP_ASYNC_COMMIT: in->commits++; return true;
    case OP_ASYNC_WAIT: run_async_wait(in, op); return true;
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL: { /* every slot: fresh, no phase completed */
        SmemBooks *b = &in->books[op->operands[0]];
        if (!b->copy_group)
            return fail(in, op, "internal error: %s of a buffer not allocated yet",
                        op_name(op->code));
        forget_waited_copies(in, op->operands[0]);
        books_clear(b);
        return true;
    }
    case OP_MBAR_EXPECT: return run_mbar_expect(in, op);
    case OP_MBAR_WAIT: return run_mbar_wait(in, op);
    case OP_MBAR_ARRIVE: return run_mbar_arrive(in, op);
    case OP_TMA_LOAD: return run_tma_load(in, op);
    case OP_TMA_STORE: return run_tma_store(in, op);
    case OP_BARRIER: return true; /* one program runs at a time: nothing to wait for */
    case OP_GDC_WAIT:             /* one launch at a time: the grids before it have completed */
    case OP_GDC_LAUNCH_DEPENDENTS: return true;
    case OP_LOCAL_LOAD: return run_local_load(in, op);
    case OP_WGMMA: return run_wgmma(in, op);
    case OP_WGMMA_WAIT: return run_wgmma_wait(in, op);
    case OP_FOR: return run_for(in, op);
    case OP_IF: return run_if(in, op);
    case OP_WHILE: return run_while(in, op);
    case OP_YIELD:
    case OP_CONDITION:
    case OP_COUNT: break;
    }
    return fail(in, op, "internal error: the interpreter cannot run %s here", op_name(op->code));
}

/* ---- the launch ------------------------------------------------------------------------------ */

static bool valid_type(Type t)
{
    if ((unsigned)t.dtype >= DT_COUNT || t.rank > TRIC_MAX_RANK)
        return false;
    for (int d = 0; d < t.rank; d++)
        if (t.shape[d] <= 0)
            return false;
    return true;
}

/* The structural facts the ops rely on (ids in range, operand and result counts, sane types),
 * checked once before the launch: the IR may come from a .tir file that was never verified,
 * and a malformed op must give a message, not a crash. */
static bool validate_region(Interp *in, const IrRegion *r)
{
    const IrFunc *f = in->f;
    for (int i = 0; i < r->nargs; i++)
        if (r->args[i] <= 0 || r->args[i] >= f->nvalues || !valid_type(vtype(in, r->args[i])))
            return fail(in, NULL, "internal error: a region argument is not a valid value");
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if ((unsigned)op->code >= OP_COUNT)
            return fail(in, op, "internal error: an op with code %d", (int)op->code);
        int want = op_num_operands(op->code);
        if ((want >= 0 && op->noperands < want) || (op->code == OP_LOAD && op->noperands < 1) ||
            (op->code == OP_WGMMA && op->noperands < 3) ||
            ((op->code == OP_STORE || op->code == OP_ATOMIC_RMW) && op->noperands < 2) ||
            (op->code == OP_ASYNC_COPY && op->noperands < 2) ||
            (op->code == OP_TMA_LOAD && (op->attr[0] < 0 || op->attr[0] >= f->ntmaps ||
                                         op->noperands != 3 + f->tmaps[op->attr[0]].rank)) ||
            (op->code == OP_TMA_STORE && (op->attr[0] < 0 || op->attr[0] >= f->ntmaps ||
                                          op->noperands != 2 + f->tmaps[op->attr[0]].rank)))
            return fail(in, op, "internal error: %s with %d operands", op_name(op->code),
                        op->noperands);
        /* mask, other: 0 = none */
        int first_optional =
            op->code == OP_LOAD ? 1
            : op->code == OP_STORE || op->code == OP_ASYNC_COPY || op->code == OP_ATOMIC_RMW
                ? 2
                : INT32_MAX;
        for (int j = 0; j < op->noperands; j++) {
            ValueId v = op->operands[j];
            if (v < 0 || v >= f->nvalues || (v == 0 && j < first_optional))
                return fail(in, op, "internal error: operand %d of %s is not a valid value", j,
                            op_name(op->code));
            /* Shared tiles have no elements of their own: only these ops can take one. */
            if (v > 0 && vtype(in, v).is_smem && !op_takes_smem(op->code, j))
                return fail(in, op, "internal error: operand %d of %s is a shared-memory tile", j,
                            op_name(op->code));
        }
        bool makes_value = op_num_results(op->code) > 0; /* not 0, not variable */
        if (makes_value && op->nresults < 1)
            return fail(in, op, "internal error: %s without a result", op_name(op->code));
        for (int j = 0; j < op->nresults; j++)
            if (op->results[j] <= 0 || op->results[j] >= f->nvalues ||
                !valid_type(vtype(in, op->results[j])))
                return fail(in, op, "internal error: result %d of %s is not a valid value", j,
                            op_name(op->code));
        for (int j = 0; j < op->nregions; j++)
            if (!validate_region(in, &op->regions[j]))
                return false;
    }
    return true;
}

static bool bind_params(Interp *in)
{
    const IrFunc *f = in->f;
    if (in->launch->nargs != f->nparams) {
        strbuf_printf(in->error, "kernel %s takes %d argument%s, the launch passed %d", f->name,
                      f->nparams, f->nparams == 1 ? "" : "s", in->launch->nargs);
        return false;
    }
    for (int i = 0; i < f->nparams; i++) {
        ValueId v = f->params[i].value;
        if (v <= 0 || v >= f->nvalues || !valid_type(vtype(in, v)))
            return fail(in, NULL, "internal error: parameter %d is not a valid value", i);
        Type t = vtype(in, v);
        void *d = value_storage(in, NULL, v);
        if (!d)
            return false;
        const InterpArg *arg = &in->launch->args[i];
        int64_t n = type_numel(t);
        for (int64_t k = 0; k < n; k++) {
            if (t.is_ptr)
                ((int64_t *)d)[k] = (int64_t)arg->ptr;
            else if (dtype_is_float(t.dtype))
                ((double *)d)[k] = round_to(t.dtype, arg->f);
            else if (t.dtype == DT_I1)
                ((int64_t *)d)[k] = arg->i != 0; /* a bool argument is true when nonzero */
            else
                ((int64_t *)d)[k] = int_wrap((uint64_t)arg->i, int_bits(t), int_signed(t));
        }
    }
    return true;
}

static void interp_free(Interp *in)
{
    if (in->slots)
        for (int i = 0; i < in->f->nvalues; i++)
            free(in->slots[i].data);
    free(in->slots);
    if (in->page_saved)
        for (int i = 0; i < in->launch->nbuffers; i++)
            free(in->page_saved[i]);
    free(in->page_saved);
    free(in->pages);
    free(in->pool);
    free(in->scratch);
    free(in->scratch2);
    free(in->scratch3);
    if (in->books)
        for (int i = 0; i < in->f->nvalues; i++)
            free(in->books[i].copy_group);
    free(in->books);
}

/* A persistent function's launch: the programs that run over the grid's tiles, and the zeroed
 * workspace appended to the buffers the kernel may touch. *ws is malloc'd (NULL when the function
 * is not persistent); false, with the error written, for a grid it cannot take or when out of
 * memory. */
static bool persistent_launch(Interp *in, const InterpLaunch *asked, InterpLaunch *run,
                              InterpBuffer **buffers, unsigned char **ws, size_t *ws_bytes)
{
    *run = *asked;
    *buffers = NULL;
    *ws = NULL;
    *ws_bytes = 0;
    if (!in->f->persistent.on)
        return true;
    int cap =
        asked->persistent_programs > 0 ? asked->persistent_programs : INTERP_PERSISTENT_PROGRAMS;
    /* the grid's tiles, x fastest; grid axes the function does not take must be 1 (the runtime
     * refuses them) */
    int axes = ir_func_grid_axes(in->f);
    int64_t tiles = 1;
    for (int a = 0; a < 3; a++) {
        in->tiles[a] = asked->grid[a];
        tiles *= asked->grid[a];
        if (a >= axes && asked->grid[a] != 1) {
            strbuf_printf(in->error,
                          "%s is persistent over %d grid axes, so its grid's axis %d is 1, not %d",
                          in->f->name, axes, a, asked->grid[a]);
            return false;
        }
    }
    if (tiles > INT32_MAX) {
        strbuf_printf(in->error, "%s: a persistent launch of %lld tiles (at most 2^31 - 1)",
                      in->f->name, (long long)tiles);
        return false;
    }
    int programs = tiles < cap ? (int)tiles : cap;
    run->grid[0] = programs;
    run->grid[1] = run->grid[2] = 1;
    uint64_t scratch = workspace_scratch_offset((uint64_t)programs);
    *ws_bytes =
        (size_t)(scratch + (uint64_t)programs * (uint64_t)in->f->persistent.workspace_bytes);
    *ws = calloc(*ws_bytes ? *ws_bytes : 1, 1);
    *buffers = malloc(sizeof **buffers * (size_t)(asked->nbuffers + 1));
    if (!*ws || !*buffers) {
        strbuf_append(in->error, "out of memory for a persistent launch's workspace");
        return false;
    }
    for (int i = 0; i < asked->nbuffers; i++)
        (*buffers)[i] = asked->buffers[i];
    (*buffers)[asked->nbuffers] = (InterpBuffer){(uint64_t)(uintptr_t)*ws, *ws_bytes};
    run->buffers = *buffers;
    run->nbuffers = asked->nbuffers + 1;
    in->workspace = (uint64_t)(uintptr_t)*ws;
    in->workspace_scratch = in->workspace + scratch;
    return true;
}

/* A persistent launch must leave its workspace's flags as it found them: zero (the runtime zeroes
 * them once, not before every launch). */
static bool workspace_flags_left_zero(Interp *in, const unsigned char *ws, int programs)
{
    for (int p = 0; p < programs * TRIC_WORKSPACE_FLAGS; p++) {
        int32_t flag;
        memcpy(&flag, ws + 4 * (size_t)p, 4);
        if (flag != 0) {
            strbuf_printf(in->error,
                          "%s: the persistent launch left its workspace flag %d at %d, not 0 (the "
                          "next launch would start from it)",
                          in->f->name, p, flag);
            return false;
        }
    }
    return true;
}

bool interp_run(const IrFunc *f, const InterpLaunch *asked, StrBuf *error)
{
    Interp in = {.f = f, .launch = asked, .error = error};
    for (int d = 0; d < 3; d++)
        if (asked->grid[d] < 0) {
            strbuf_printf(error, "launch of %s with a negative grid (%d, %d, %d)", f->name,
                          asked->grid[0], asked->grid[1], asked->grid[2]);
            return false;
        }
    InterpLaunch run;
    InterpBuffer *buffers;
    unsigned char *ws;
    size_t ws_bytes;
    if (!persistent_launch(&in, asked, &run, &buffers, &ws, &ws_bytes)) {

        free(buffers);
        free(ws);
        return false;
    }
    const InterpLaunch *launch = &run;
    in.launch = launch;
    in.slots = calloc((size_t)(f->nvalues > 0 ? f->nvalues : 1), sizeof *in.slots);
    in.page_saved =
        calloc((size_t)(launch->nbuffers > 0 ? launch->nbuffers : 1), sizeof *in.page_saved);
    in.books = calloc((size_t)(f->nvalues > 0 ? f->nvalues : 1), sizeof *in.books);
    bool ok = in.slots && in.page_saved && in.books;
    if (!ok)
        strbuf_append(error, "out of memory starting the interpreter");
    ok = ok && validate_region(&in, &f->body) && bind_params(&in);
    bool last_first = f->persistent.on; /* flag_wait: programs wait on later ones */
    for (int z = 0; ok && z < launch->grid[2]; z++)
        for (int y = 0; ok && y < launch->grid[1]; y++)
            for (int x = 0; ok && x < launch->grid[0]; x++) {
                in.pid[0] = last_first ? launch->grid[0] - 1 - x : x;
                in.pid[1] = y;
                in.pid[2] = z;
                pipeline_reset(&in);
                const IrOp *term;
                ok = run_region(&in, &f->body, &term);
                /* A trailing `return` terminator, if lowering writes one, has nothing to pass. */
            }
    if (ok && ws)
        ok = workspace_flags_left_zero(&in, ws, launch->grid[0]);
    if (!ok)
        undo_stores(&in);
    interp_free(&in);
    free(buffers);
    free(ws);
    return ok;
}
