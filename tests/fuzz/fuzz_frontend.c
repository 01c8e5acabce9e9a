/* fuzz_frontend: libFuzzer target for the front end. The bytes are a .tri file: parse it and, when
 * it parses, evaluate each @jit function's @triton.autotune configs and run sema once per @jit
 * function (no signature, so most runs end in diagnostics), and
 * lower what sema accepts to the tile IR. Sema reports every error in a kernel, so lowering what
 * it accepted fails only on a bug in tric (an internal error): that aborts, as a crash would.
 * Then it parses them again as an imported module (host code set aside, host_skip.c).
 * Whatever the input, nothing may crash, hang, assert or leak: every allocation of a run lives in
 * its arena or its Diag, both freed here.
 * Instrument the library too (TRIC_FUZZ only instruments this file):
 *   CC=clang-19 cmake -S . -B build-fuzz -DTRIC_FUZZ=ON \
 *       -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link,address,undefined
 *   cmake --build build-fuzz --target tric-fuzz
 *   cp -r tests/fuzz/corpus /tmp/corpus && build-fuzz/tric-fuzz -max_total_time=30 /tmp/corpus */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1); /* a private copy: the front end may assume a NUL after it */
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    SrcFile file = {"fuzz.tri", text, size};
    Arena *arena = arena_new();
    Diag diag = {0};
    /* the host value readers as driver_host_env names them (the fuzzer links the front end
     * alone), with no value given: every lookup takes its default */
    static const char *const readers[] = {"os.environ.get", "os.getenv", NULL};
    const SpecOptions host = {.host_env = {.readers = readers}};
    Module *m = parse_module(&file, &host.host_env, arena, &diag);
    if (m) {
        for (int i = 0; i < m->nfuncs; i++) {
            if (!m->funcs[i]->is_jit)
                continue;
            /* @triton.autotune's configs, evaluated as the driver does before sema */
            Autotune tuning;
            Diag tune_diag = {0};
            (void)autotune_read(m, m->funcs[i], &host, &tuning, arena, &tune_diag);
            diag_free(&tune_diag);
            SpecOptions opt = {.kernel_name = m->funcs[i]->name};
            Diag sema_diag = {0};
            Kernel *k = sema_specialize(m, &opt, arena, &sema_diag);
            if (k) {
                Diag lower_diag = {0};
                if (!build_ir(k, arena, &lower_diag)) {
                    fputs(lower_diag.text.data ? lower_diag.text.data : "lowering failed\n",
                          stderr);
                    abort();
                }
                diag_free(&lower_diag);
            }
            diag_free(&sema_diag);
        }
        StrBuf printed = {0};
        ast_print_module(&printed, m);
        strbuf_free(&printed);
    }
    /* The same bytes as an imported module: its host code is set aside even without a kernel. */
    Diag imported_diag = {0};
    (void)parse_imported_module(&file, &host.host_env, arena, &imported_diag);
    diag_free(&imported_diag);
    diag_free(&diag);
    arena_free(arena);
    free(text);
    return 0;
}
