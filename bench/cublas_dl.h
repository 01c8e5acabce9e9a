/* cublas_dl.h: the few cuBLAS entry points bench_seed2_report needs, loaded with dlopen at run
 * time, so the benchmarks build without the CUDA toolkit and run where libcublas is missing (the
 * cuBLAS line is then skipped with a message). Only what a row-major fp16 GEMM uses is declared.
 *
 * The enum values are cuBLAS's ABI, as the CUDA 13 toolkit's headers define them
 * (/usr/local/cuda/include/cublas_api.h: CUBLAS_STATUS_SUCCESS = 0, CUBLAS_OP_N = 0,
 * CUBLAS_GEMM_DEFAULT = -1, CUBLAS_COMPUTE_32F = 68; library_types.h: CUDA_R_16F = 2); they are
 * the same in CUDA 12's, so libcublas.so.12 takes them too.
 *
 * Where libcublas is: $TRIC_CUBLAS (a path) first, then the sonames through the loader's search
 * (LD_LIBRARY_PATH, /usr/local/cuda/lib64 when ldconfig knows it; scripts/seed2_report.sh adds
 * the pip wheel's nvidia/cublas/lib that torch uses). */
#ifndef TRIC_BENCH_CUBLAS_DL_H
#define TRIC_BENCH_CUBLAS_DL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;

enum {
    CUBLAS_STATUS_SUCCESS = 0, /* cublas_api.h, cublasStatus_t */
    CUBLAS_OP_N = 0,           /* cublas_api.h, cublasOperation_t */
    CUBLAS_GEMM_DEFAULT = -1,  /* cublas_api.h, cublasGemmAlgo_t */
    CUBLAS_COMPUTE_32F = 68,   /* cublas_api.h, cublasComputeType_t */
    CUDA_R_16F = 2,            /* library_types.h, cudaDataType */
};

/* cublasGemmEx's prototype (cublas_api.h) with the enums as int: they are passed as int. */
typedef cublasStatus_t (*cublasGemmEx_fn)(cublasHandle_t handle, int transa, int transb, int m,
                                          int n, int k, const void *alpha, const void *A, int Atype,
                                          int lda, const void *B, int Btype, int ldb,
                                          const void *beta, void *C, int Ctype, int ldc,
                                          int computeType, int algo);

typedef struct CublasApi {
    void *lib;
    const char *soname; /* the name that loaded */
    cublasHandle_t handle;
    cublasStatus_t (*create)(cublasHandle_t *handle);        /* cublasCreate_v2 */
    cublasStatus_t (*destroy)(cublasHandle_t handle);        /* cublasDestroy_v2 */
    cublasStatus_t (*set_stream)(cublasHandle_t h, void *s); /* cublasSetStream_v2 (cudaStream_t) */
    cublasStatus_t (*get_version)(cublasHandle_t h, int *v); /* cublasGetVersion_v2 */
    const char *(*status_string)(cublasStatus_t st);         /* cublasGetStatusString, or NULL */
    cublasGemmEx_fn gemm_ex;                                 /* cublasGemmEx */
} CublasApi;

/* "CUBLAS_STATUS_..." for a status, or its number when the library has no cublasGetStatusString. */
static inline const char *cublas_dl_status(const CublasApi *api, cublasStatus_t st)
{
    static char text[32];
    if (api->status_string)
        return api->status_string(st);
    snprintf(text, sizeof text, "cublas status %d", st);
    return text;
}

/* Loads libcublas and creates a handle (on the CUDA context current on this thread: tric's, the
 * device's primary context, once tric_device_open has run). 1 on success; 0 with why written to
 * why (the caller skips cuBLAS). The handle works on the legacy stream (NULL) unless set. */
static inline int cublas_dl_open(CublasApi *api, char *why, size_t whylen)
{
    static const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    *api = (CublasApi){0};
    const char *env = getenv("TRIC_CUBLAS");
    if (env && *env) {
        api->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        api->soname = env;
    }
    for (size_t i = 0; !api->lib && i < sizeof names / sizeof *names; i++) {
        api->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        api->soname = names[i];
    }
    if (!api->lib) {
        snprintf(why, whylen, "cannot load libcublas (%s; set TRIC_CUBLAS=/path/to/libcublas.so)",
                 dlerror());
        return 0;
    }
    /* dlsym returns void *, which ISO C does not convert to a function pointer: storing it through
     * a void ** to the field is the form POSIX's dlsym page gives. */
#define CUBLAS_DL_SYM(field, name)                                                                 \
    do {                                                                                           \
        *(void **)&api->field = dlsym(api->lib, name);                                             \
    } while (0)
    CUBLAS_DL_SYM(create, "cublasCreate_v2");
    CUBLAS_DL_SYM(destroy, "cublasDestroy_v2");
    CUBLAS_DL_SYM(set_stream, "cublasSetStream_v2");
    CUBLAS_DL_SYM(get_version, "cublasGetVersion_v2");
    CUBLAS_DL_SYM(status_string, "cublasGetStatusString");
    CUBLAS_DL_SYM(gemm_ex, "cublasGemmEx");
#undef CUBLAS_DL_SYM
    if (!api->create || !api->destroy || !api->set_stream || !api->gemm_ex) {
        snprintf(why, whylen, "%s lacks cublasCreate_v2, cublasSetStream_v2 or cublasGemmEx",
                 api->soname);
        dlclose(api->lib);
        *api = (CublasApi){0};
        return 0;
    }
    cublasStatus_t st = api->create(&api->handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, whylen, "cublasCreate_v2 failed: %s", cublas_dl_status(api, st));
        dlclose(api->lib);
        *api = (CublasApi){0};
        return 0;
    }
    return 1;
}

/* cuBLAS's version as MAJOR*10000 + MINOR*100 + PATCH, 0 when unknown. */
static inline int cublas_dl_version(const CublasApi *api)
{
    int v = 0;
    if (api->get_version && api->get_version(api->handle, &v) != CUBLAS_STATUS_SUCCESS)
        v = 0;
    return v;
}

static inline void cublas_dl_close(CublasApi *api)
{
    if (api->handle)
        api->destroy(api->handle);
    /* Not dlclose'd: libcublas registers atexit work on some versions, and unloading it before the
     * process ends would leave that pointing at unmapped code. */
    *api = (CublasApi){0};
}

/* Row-major C[M,N] = A[M,K] @ B[K,N], fp16 in and out, fp32 accumulation, device addresses. cuBLAS
 * is column-major: a row-major X is a column-major X^T, so it computes C^T = B^T A^T, an
 * (N x K) @ (K x M) product: m = N, n = M, k = K, B first (ld N), then A (ld K); C^T has ld N. */
static inline cublasStatus_t cublas_dl_hgemm_rowmajor(const CublasApi *api, uint64_t a, uint64_t b,
                                                      uint64_t c, int M, int N, int K)
{
    const float alpha = 1.0f, beta = 0.0f; /* float: the compute type is CUBLAS_COMPUTE_32F */
    return api->gemm_ex(api->handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                        (const void *)(uintptr_t)b, CUDA_R_16F, N, (const void *)(uintptr_t)a,
                        CUDA_R_16F, K, &beta, (void *)(uintptr_t)c, CUDA_R_16F, N,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

#endif
