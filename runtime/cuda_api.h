/* cuda_api.h: the part of the CUDA Driver API tric uses, declared here so that building tric never
 * needs the CUDA toolkit. libcuda.so.1 is opened at run time (dlopen) and every entry point is
 * fetched with cuGetProcAddress_v2 at CUDA version 12000, which returns the ABI version the names
 * below have in CUDA 12 (cuMemAlloc -> cuMemAlloc_v2, ...). Types and enum values follow the
 * toolkit's cuda.h (CUDA 12/13); only the members used are listed.
 *
 * Bench programs may include this header (for events) after opening a cuda device with tric. */
#ifndef TRIC_CUDA_API_H
#define TRIC_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NOT_READY = 600,
    /* CUdevice_attribute */
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8, /* without opting in (48 KB so far) */
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    /* CUfunction_attribute */
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    /* CUstreamCaptureStatus */
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
    /* CUjit_option */
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    /* CUstream_flags, CUevent_flags */
    CU_STREAM_DEFAULT = 0,
    CU_STREAM_NON_BLOCKING = 1,
    CU_EVENT_DEFAULT = 0,
    CU_EVENT_DISABLE_TIMING = 2,
    /* CUdriverProcAddress_flags */
    CU_GET_PROC_ADDRESS_DEFAULT = 0,
    /* CUtensorMapDataType */
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
    CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
    CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
    CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
    CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
    /* CUtensorMapInterleave */
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
    /* CUtensorMapSwizzle */
    CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    CU_TENSOR_MAP_SWIZZLE_32B = 1,
    CU_TENSOR_MAP_SWIZZLE_64B = 2,
    CU_TENSOR_MAP_SWIZZLE_128B = 3,
    /* CUtensorMapL2promotion */
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
    /* CUtensorMapFloatOOBfill: NONE fills out-of-bounds elements with zeros */
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
};

/* CUtensorMap: the opaque 128-byte descriptor cuTensorMapEncodeTiled writes, which must be
 * 64-byte aligned (CUDA Driver API, cuTensorMapEncodeTiled: "tensorMap address must be aligned
 * to 64 bytes"; cuda.h aligns its own type to 128). */
#define CU_TENSOR_MAP_NUM_QWORDS 16
typedef struct CUtensorMap {
    _Alignas(64) uint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;

/* cuLaunchKernelEx's configuration (CUDA 12.0; cuda.h's CUlaunchConfig, CUlaunchAttribute and
 * CUlaunchAttributeValue, whose 64-byte union holds pointers: 8-byte aligned). */
enum { CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef union CUlaunchAttributeValue {
    char pad[64];
    uint64_t align;
    int programmatic_stream_serialization_allowed;
} CUlaunchAttributeValue;
typedef struct CUlaunchAttribute {
    int id;
    char pad[4];
    CUlaunchAttributeValue value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig {
    unsigned grid_x, grid_y, grid_z;
    unsigned block_x, block_y, block_z;
    unsigned shared_bytes;
    CUstream stream;
    CUlaunchAttribute *attrs;
    unsigned nattrs;
} CUlaunchConfig;
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute as in cuda.h");
_Static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig as in cuda.h");

/* The entry points, as members of one table: X(return, name, params). */
/* clang-format off */
#define TRIC_CUDA_FUNCS(X)                                                                         \
    X(cuInit, (unsigned flags))                                                                    \
    X(cuDriverGetVersion, (int *version))                                                          \
    X(cuGetErrorName, (CUresult error, const char **str))                                          \
    X(cuGetErrorString, (CUresult error, const char **str))                                        \
    X(cuDeviceGetCount, (int *count))                                                              \
    X(cuDeviceGet, (CUdevice * dev, int ordinal))                                                  \
    X(cuDeviceGetName, (char *name, int len, CUdevice dev))                                        \
    X(cuDeviceGetAttribute, (int *value, int attribute, CUdevice dev))                             \
    X(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev))                                   \
    X(cuDevicePrimaryCtxRelease, (CUdevice dev))                                                   \
    X(cuCtxSetCurrent, (CUcontext ctx))                                                            \
    X(cuCtxSynchronize, (void))                                                                    \
    X(cuModuleLoadDataEx, (CUmodule * mod, const void *image, unsigned nopts, int *opts,           \
                           void **optvals))                                                        \
    X(cuModuleUnload, (CUmodule mod))                                                              \
    X(cuModuleGetFunction, (CUfunction * fn, CUmodule mod, const char *name))                      \
    X(cuFuncSetAttribute, (CUfunction fn, int attribute, int value))                               \
    X(cuLaunchKernel, (CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,          \
                       unsigned by, unsigned bz, unsigned shared, CUstream stream, void **params,  \
                       void **extra))                                                              \
    X(cuMemAlloc, (CUdeviceptr * ptr, size_t bytes))                                               \
    X(cuMemFree, (CUdeviceptr ptr))                                                                \
    X(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t bytes))                              \
    X(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t bytes))                                    \
    X(cuMemcpyDtoD, (CUdeviceptr dst, CUdeviceptr src, size_t bytes))                              \
    X(cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))             \
    X(cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t bytes, CUstream s))                   \
    X(cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))             \
    X(cuMemsetD8, (CUdeviceptr dst, unsigned char value, size_t n))                                \
    X(cuMemsetD8Async, (CUdeviceptr dst, unsigned char value, size_t n, CUstream s))               \
    X(cuStreamCreate, (CUstream * s, unsigned flags))                                              \
    X(cuStreamDestroy, (CUstream s))                                                               \
    X(cuStreamSynchronize, (CUstream s))                                                           \
    X(cuStreamGetCtx, (CUstream s, CUcontext * ctx))                                               \
    X(cuStreamIsCapturing, (CUstream s, int *capture_status))                                      \
    X(cuFuncGetAttribute, (int *value, int attribute, CUfunction fn))                              \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *blocks, CUfunction fn, int block_size,    \
                                                    size_t dynamic_shared))                        \
    X(cuEventCreate, (CUevent * e, unsigned flags))                                                \
    X(cuEventDestroy, (CUevent e))                                                                 \
    X(cuEventRecord, (CUevent e, CUstream s))                                                      \
    X(cuEventSynchronize, (CUevent e))                                                             \
    X(cuEventElapsedTime, (float *ms, CUevent start, CUevent end))

/* Entry points a launch needs only for some kernels: a driver without one still loads, and the
 * launch that needs it fails saying so (the member is NULL). cuTensorMapEncodeTiled: the
 * tensor maps of kernels that read through TMA (sm_90+; CUDA 12.0). cuLaunchKernelEx: launches
 * with tric_launch_options.programmatic_dependent (CUDA 12.0). */
#define TRIC_CUDA_OPTIONAL_FUNCS(X)                                                                \
    X(cuTensorMapEncodeTiled, (CUtensorMap * map, int data_type, uint32_t rank, void *address,    \
                               const uint64_t *dims, const uint64_t *strides,                      \
                               const uint32_t *box, const uint32_t *element_strides,               \
                               int interleave, int swizzle, int l2_promotion, int oob_fill))       \
    X(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction fn, void **params, void **extra))
/* clang-format on */

typedef struct RtCudaApi {
#define X(name, params) CUresult(*name) params;
    TRIC_CUDA_FUNCS(X)
    TRIC_CUDA_OPTIONAL_FUNCS(X)
#undef X
} RtCudaApi;

/* Loads libcuda and every entry point once (thread-safe); NULL when that failed (a missing
 * optional entry point is no failure: its member stays NULL); then
 * rt_cuda_api_error() says why ("libcuda.so.1 not found (no NVIDIA driver on this machine)"). */
const RtCudaApi *rt_cuda_api(void);
const char *rt_cuda_api_error(void);
/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" for an error code. */
const char *rt_cuda_error_text(CUresult r, char *buf, size_t len);

#endif
