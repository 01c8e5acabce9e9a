/* types.c: element types (the TRIC_DTYPES table) and block types. */
#include "support/support.h"

#include <string.h>

static const struct {
    const char *name, *sig;
    int bits;
    DKind kind;
} dtype_table[DT_COUNT] = {
#define X(e, name, sig, bits, kind) [e] = {name, sig, bits, kind},
    TRIC_DTYPES(X)
#undef X
};

const char *dtype_name(DType t) { return (unsigned)t < DT_COUNT ? dtype_table[t].name : "?"; }
const char *dtype_sig_name(DType t) { return (unsigned)t < DT_COUNT ? dtype_table[t].sig : "?"; }
int dtype_bits(DType t) { return dtype_table[t].bits; }
int dtype_bytes(DType t) { return t == DT_I1 ? 1 : dtype_table[t].bits / 8; }
DKind dtype_kind(DType t) { return dtype_table[t].kind; }
bool dtype_is_float(DType t) { return dtype_table[t].kind == DK_FLOAT; }
bool dtype_is_int(DType t) { return dtype_table[t].kind != DK_FLOAT; }
bool dtype_is_signed(DType t) { return dtype_table[t].kind == DK_INT && t != DT_I1; }
bool dtype_is_fp8(DType t) { return t == DT_F8E4NV || t == DT_F8E5; }

bool dtype_from_name(const char *name, DType *out)
{
    static const struct {
        const char *alias;
        DType t;
    } aliases[] = {
        {"bool", DT_I1},  {"f16", DT_F16},   {"f32", DT_F32},    {"f64", DT_F64},
        {"half", DT_F16}, {"float", DT_F32}, {"double", DT_F64},
    };
    for (int i = 0; i < DT_COUNT; i++) {
        if (!strcmp(name, dtype_table[i].name) || !strcmp(name, dtype_table[i].sig)) {
            *out = (DType)i;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (!strcmp(name, aliases[i].alias)) {
            *out = aliases[i].t;
            return true;
        }
    }
    return false;
}

Type type_scalar(DType t) { return (Type){.dtype = t}; }
Type type_ptr(DType pointee) { return (Type){.dtype = pointee, .is_ptr = true}; }

Type type_block(Type elem, int rank, const int32_t *shape)
{
    Type t = {.dtype = elem.dtype, .is_ptr = elem.is_ptr, .rank = (uint8_t)rank};
    for (int i = 0; i < rank && i < TRIC_MAX_RANK; i++)
        t.shape[i] = shape[i];
    return t;
}

Type type_elem(Type t) { return (Type){.dtype = t.dtype, .is_ptr = t.is_ptr}; }

bool type_same_shape(Type a, Type b)
{
    if (a.rank != b.rank)
        return false;
    for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != b.shape[i])
            return false;
    return true;
}

bool type_equal(Type a, Type b)
{
    return a.dtype == b.dtype && a.is_ptr == b.is_ptr && a.is_smem == b.is_smem &&
           type_same_shape(a, b);
}

int64_t type_numel(Type t)
{
    int64_t n = 1;
    for (int i = 0; i < t.rank; i++)
        n *= t.shape[i];
    return n;
}

void type_print(StrBuf *sb, Type t)
{
    if (t.is_smem)
        strbuf_putc(sb, '!'), strbuf_append(sb, "smem");
    if (t.rank > 0) {
        strbuf_putc(sb, '<');
        for (int i = 0; i < t.rank; i++)
            strbuf_printf(sb, "%dx", (int)t.shape[i]);
    }
    if (t.is_ptr)
        strbuf_putc(sb, '*');
    strbuf_append(sb, dtype_sig_name(t.dtype));
    if (t.rank > 0)
        strbuf_putc(sb, '>');
}

const char *type_str(Arena *arena, Type t)
{
    StrBuf sb = {0};
    type_print(&sb, t);
    const char *s = arena_strdup(arena, sb.data ? sb.data : "");
    strbuf_free(&sb);
    return s;
}
