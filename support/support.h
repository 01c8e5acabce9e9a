/* support.h: the vocabulary every layer of tric shares.
 *
 * Sections (one per file in support/):
 *   arena.c   memory: one arena per compilation, freed at once
 *   strbuf.c  growable strings
 *   diag.c    diagnostics: file:line:col, the source line, a caret
 *   types.c   element types (the X-macro table) and block types
 *
 * Nothing here knows about LLVM or CUDA. */
#ifndef TRIC_SUPPORT_H
#define TRIC_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tric/version.h" /* TRIC_VERSION, generated from CMakeLists.txt */

#if defined(__GNUC__)
#define TRIC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TRIC_PRINTF(a, b)
#endif

/* ---- arena.c -------------------------------------------------------------------------------- */

/* Out of memory. Nothing in tric aborts when malloc fails: an arena whose malloc fails goes on
 * from memory mapped straight from the kernel (mmap; only when that fails too is the process
 * beyond help, and the arena aborts with a message), and a StrBuf whose realloc fails drops the
 * append (see strbuf.c). Either way the failure is counted for the calling thread; a compiler
 * entry point (driver_compile, the runtime's compiles) compares the count before and after and
 * reports "out of memory" instead of a result built from partial text (the runtime returns
 * TRIC_ERROR_OUT_OF_MEMORY). So a failed allocation never crashes and never goes unnoticed. */
unsigned long support_alloc_failures(void);
/* For tests: the n-th arena chunk or StrBuf growth from now (any thread) fails as if malloc had
 * returned NULL; 0 turns it off. */
void support_fail_allocation(long n);
/* Whether an allocation should fail now (the injection above, or malloc's NULL) and count it. */
bool support_alloc_should_fail(void);
void support_note_alloc_failure(void);

/* A bump allocator. Everything a compilation makes (tokens, AST, types, IR) lives in one arena and
 * is released by arena_free; nothing inside it is freed one by one. */
typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *arena);
void *arena_alloc(Arena *arena, size_t size); /* zeroed, 16-byte aligned */
void *arena_grow(Arena *arena, void *old, size_t old_size,
                 size_t new_size); /* copy into a bigger block */
char *arena_strdup(Arena *arena, const char *s);
char *arena_strndup(Arena *arena, const char *s, size_t n);
char *arena_printf(Arena *arena, const char *fmt, ...) TRIC_PRINTF(2, 3);

/* An arena-backed growable array: ARENA_PUSH(arena, items, count, cap, value). */
#define ARENA_PUSH(arena, items, count, cap, value)                                                \
    do {                                                                                           \
        if ((count) == (cap)) {                                                                    \
            size_t new_cap_ = (cap) ? (size_t)(cap)*2 : 8;                                         \
            (items) = arena_grow((arena), (items), (size_t)(cap) * sizeof *(items),                \
                                 new_cap_ * sizeof *(items));                                      \
            (cap) = new_cap_;                                                                      \
        }                                                                                          \
        (items)[(count)++] = (value);                                                              \
    } while (0)

/* ---- strbuf.c ------------------------------------------------------------------------------- */

/* A malloc-backed string that grows; used for output (printers, PTX, messages) that outlives an
 * arena. strbuf_free releases it. data is always NUL-terminated once anything was appended. */
typedef struct StrBuf {
    char *data;
    size_t len, cap;
    bool failed; /* a growth failed: text was dropped (support_alloc_failures counts it) */
} StrBuf;

void strbuf_append(StrBuf *sb, const char *s);
void strbuf_append_n(StrBuf *sb, const char *s, size_t n);
void strbuf_printf(StrBuf *sb, const char *fmt, ...) TRIC_PRINTF(2, 3);
void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap);
void strbuf_putc(StrBuf *sb, char c);
void strbuf_clear(StrBuf *sb);
void strbuf_free(StrBuf *sb);
char *strbuf_take(StrBuf *sb); /* hand the malloc'd text to the caller; sb is left empty */
/* Appends the whole file at path; false when it cannot be opened (errno says why) or a read
 * fails. Out of memory shows as sb->failed, as for every append. */
bool strbuf_read_file(StrBuf *sb, const char *path);

/* ---- diag.c --------------------------------------------------------------------------------- */

/* A source file as the compiler saw it. text may be NULL (IR parsed from a file that was not kept),
 * in which case diagnostics print no source line. */
typedef struct SrcFile {
    const char *name;
    const char *text;
    size_t len;
} SrcFile;

/* Where a token, AST node or IR op came from. line and col are 1-based; col counts bytes. */
typedef struct SrcLoc {
    const SrcFile *file;
    int line, col;
} SrcLoc;

/* A sink for diagnostics. Messages are rendered into text (clang style):
 *     file.tri:3:12: error: message
 *         x = tl.load(p, maks=m)
 *                        ^
 * and, when echo is set, written to stderr as they come. After max_errors errors (default 20)
 * further errors are counted but not rendered; one line says so. */
typedef struct Diag {
    StrBuf text;
    int errors;
    int max_errors; /* 0 means the default, 20 */
    bool echo;
} Diag;

void diag_error(Diag *d, SrcLoc loc, const char *fmt, ...) TRIC_PRINTF(3, 4);
void diag_verror(Diag *d, SrcLoc loc, const char *fmt, va_list ap);
void diag_note(Diag *d, SrcLoc loc, const char *fmt, ...) TRIC_PRINTF(3, 4);
/* Rendered like a note, with "warning:"; never counted as an error. */
void diag_warning(Diag *d, SrcLoc loc, const char *fmt, ...) TRIC_PRINTF(3, 4);
/* Rendered like a note, with "remark:": what an optimization decided and why ("loop not
 * pipelined ..."), emitted only when asked for (PassOptions.remarks); never an error. */
void diag_remark(Diag *d, SrcLoc loc, const char *fmt, ...) TRIC_PRINTF(3, 4);
/* An error with no source location ("tric: error: ..."), e.g. for a bad command-line option. */
void diag_plain_error(Diag *d, const char *fmt, ...) TRIC_PRINTF(2, 3);
/* A bug in tric itself: names the compiler's own file and line, never the user's. */
void diag_internal(Diag *d, const char *file, int line, const char *fmt, ...) TRIC_PRINTF(4, 5);
#define TRIC_INTERNAL(d, ...) diag_internal((d), __FILE__, __LINE__, __VA_ARGS__)
/* Appends another sink's rendered messages and error count (echoed when d echoes): for work
 * tried on the side, whose messages are kept only when it is the answer. */
void diag_merge(Diag *d, const Diag *from);
void diag_free(Diag *d);

/* ---- types.c -------------------------------------------------------------------------------- */

/* Element types. One table: enum, Triton name (tl.NAME), signature name (Triton's AOT form), bits,
 * kind. The order matters: ints by width, then unsigned, then floats. */
/* clang-format off */
#define TRIC_DTYPES(X)                                                                             \
    /* enum     tl name     sig     bits kind */                                                   \
    X(DT_I1,   "int1",     "i1",   1,  DK_INT)   /* bool; comparisons produce it */                \
    X(DT_I8,   "int8",     "i8",   8,  DK_INT)                                                     \
    X(DT_I16,  "int16",    "i16",  16, DK_INT)                                                     \
    X(DT_I32,  "int32",    "i32",  32, DK_INT)   /* Python ints that fit become int32 */           \
    X(DT_I64,  "int64",    "i64",  64, DK_INT)                                                     \
    X(DT_U8,   "uint8",    "u8",   8,  DK_UINT)                                                    \
    X(DT_U16,  "uint16",   "u16",  16, DK_UINT)                                                    \
    X(DT_U32,  "uint32",   "u32",  32, DK_UINT)                                                    \
    X(DT_U64,  "uint64",   "u64",  64, DK_UINT)                                                    \
    X(DT_F16,  "float16",  "fp16", 16, DK_FLOAT)                                                   \
    X(DT_BF16, "bfloat16", "bf16", 16, DK_FLOAT)                                                   \
    X(DT_F32,  "float32",  "fp32", 32, DK_FLOAT) /* Python floats become float32 */                \
    X(DT_F64,  "float64",  "fp64", 64, DK_FLOAT)                                                   \
    /* fp8, storage and conversion types (no arithmetic): e4m3fn (bias 7, no infinities, NaN */   \
    /* S.1111.111, max 448) and e5m2 (IEEE-like: bias 15, infinities, max 57344) */               \
    X(DT_F8E4NV, "float8e4nv", "fp8e4nv", 8, DK_FLOAT)                                             \
    X(DT_F8E5, "float8e5",   "fp8e5",   8, DK_FLOAT)
/* clang-format on */

typedef enum DType {
#define X(e, name, sig, bits, kind) e,
    TRIC_DTYPES(X)
#undef X
        DT_COUNT
} DType;

typedef enum DKind { DK_INT, DK_UINT, DK_FLOAT } DKind;

const char *dtype_name(DType t);     /* "float16" */
const char *dtype_sig_name(DType t); /* "fp16" */
int dtype_bits(DType t);
int dtype_bytes(DType t); /* int1 is stored as one byte */
DKind dtype_kind(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);    /* signed, unsigned or int1 */
bool dtype_is_signed(DType t); /* DK_INT other than int1 */
bool dtype_is_fp8(DType t);    /* float8e4nv or float8e5 */
/* Looks a name up in either column ("float16", "fp16", "f16" alias accepted; also "bool" = int1,
 * "fp8" alone is not a type). Returns false when unknown. */
bool dtype_from_name(const char *name, DType *out);

/* ---- float8.c --------------------------------------------------------------------------------- */

/* fp8 (t is DT_F8E4NV or DT_F8E5) <-> double, by the GPU's rule (PTX ISA "cvt", .rn.satfinite):
 * round to nearest even; beyond the largest finite value, infinities included, saturate to it;
 * NaN stays NaN (e4m3: S.1111.111; e5m2: its payload kept). Decoding is exact. */
double fp8_to_double(uint8_t bits, DType t);
uint8_t fp8_from_double(double x, DType t);
double fp8_round(double x, DType t); /* the nearest fp8 value of x, as a double */

#define TRIC_MAX_RANK 5

/* The type of a value: a scalar (rank 0) or a block (rank >= 1, every dim a power of two), whose
 * element is either a dtype or a pointer (global address space) to a dtype. Passed by value.
 * is_smem marks a tile that lives in shared memory (tile IR only, after the pipelining pass: a
 * local_alloc buffer, whose dim 0 counts its slots, or a slot view of one); it prints as
 * "!smem<3x128x64xfp16>" and has no registers. */
typedef struct Type {
    DType dtype; /* element type, or the pointee when is_ptr */
    bool is_ptr;
    bool is_smem;
    uint8_t rank;
    int32_t shape[TRIC_MAX_RANK];
} Type;

Type type_scalar(DType t);
Type type_ptr(DType pointee);
Type type_block(Type elem, int rank, const int32_t *shape); /* elem's rank is ignored */
Type type_elem(Type t);                                     /* the same with rank 0 */
bool type_equal(Type a, Type b);
bool type_same_shape(Type a, Type b);
int64_t type_numel(Type t); /* 1 for scalars */
/* "fp32", "*fp16", "<128x64xfp16>", "<128x*fp32>". The IR text form and messages use this. */
void type_print(StrBuf *sb, Type t);
const char *type_str(Arena *arena, Type t);

#endif
