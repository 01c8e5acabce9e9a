/* exec_test.h: the harness of the tests that compile .tri source with driver_compile and run the
 * kernel on the interpreter against C (tests/unit/lower_*_exec.c, interp_fp8.c): CHECK
 * (check.h), a compile that counts its diagnostics as a failure, the kernel-argument shorthands,
 * a run that counts the interpreter's error, and an op counter. Header-only, so that each test
 * stays one executable. */
#ifndef TRIC_UNIT_EXEC_TEST_H
#define TRIC_UNIT_EXEC_TEST_H

#include "check.h"
#include "driver/driver.h"

#include <stdint.h>
#include <string.h>

/* A compiled kernel: the driver's result and its IR (NULL when the compile failed). */
typedef struct Compiled {
    CompileResult res;
    IrFunc *ir;
} Compiled;

/* Compiles src (named file_name in messages) to IR; kernel NULL finds the file's one kernel. A
 * failure prints the signature, the source and the diagnostics and counts in test_failures. */
static inline bool exec_compile(Compiled *c, const char *file_name, const char *src,
                                const char *kernel, const char *signature, const Define *defs,
                                int ndefs)
{
    SrcFile file = {.name = file_name, .text = src, .len = strlen(src)};
    CompileOptions opt = {
        .spec = {.kernel_name = kernel, .signature = signature, .defines = defs, .ndefines = ndefs},
        .emit = EMIT_IR};
    Diag diag = {0};
    memset(c, 0, sizeof *c);
    bool ok = driver_compile(&file, &opt, &c->res, &diag) && c->res.ir;
    if (!ok) {
        printf("FAIL compiling %s (%s):\n%s\n%s\n", file_name, signature ? signature : "", src,
               diag.text.data ? diag.text.data : "");
        test_failures++;
    }
    diag_free(&diag);
    c->ir = ok ? c->res.ir : NULL;
    return ok;
}

static inline InterpArg P(const void *p) { return (InterpArg){.ptr = (uint64_t)(uintptr_t)p}; }
static inline InterpArg I(int64_t v) { return (InterpArg){.i = v}; }
static inline InterpBuffer B(const void *p, size_t bytes)
{
    return (InterpBuffer){(uint64_t)(uintptr_t)p, bytes};
}

/* Runs f on a 1-D grid; an interpreter error is printed and counted. */
static inline bool run(const IrFunc *f, int grid, const InterpArg *args, int nargs,
                       const InterpBuffer *bufs, int nbufs)
{
    InterpLaunch l = {
        .grid = {grid, 1, 1}, .args = args, .nargs = nargs, .buffers = bufs, .nbuffers = nbufs};
    StrBuf err = {0};
    bool ok = interp_run(f, &l, &err);
    if (!ok) {
        printf("FAIL %s: interp_run: %s\n", f->name, err.data ? err.data : "");
        test_failures++;
    }
    strbuf_free(&err);
    return ok;
}

/* How many ops of r (nested regions included) are code. */
static inline int count_ops(const IrRegion *r, OpCode code)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        n += r->ops[i]->code == code;
        for (int k = 0; k < r->ops[i]->nregions; k++)
            n += count_ops(&r->ops[i]->regions[k], code);
    }
    return n;
}

#endif
