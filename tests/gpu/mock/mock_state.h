/* mock_state.h: what the stand-in libcuda.so.1 (libcuda_mock.c) records for the tests, which
 * read it through dlsym(lib, "mock_state"): one definition for the mock and every test. */
#ifndef TRIC_MOCK_STATE_H
#define TRIC_MOCK_STATE_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

enum { MOCK_MAX_DEVICES = 4 };

/* What the tests read back. */
typedef struct MockState {
    int ctx_set_current_calls;
    int launches;
    unsigned grid[3], block[3], shared;
    /* the distinct (threads along x, dynamic shared bytes, programs along x) launched: which
     * configs a tuning ran, told apart by their shape (a test clears nshapes) */
    unsigned shapes[32][3];
    int nshapes;
    /* what an event pair around a function's first launch measures on top (host work only that
     * launch does; a test sets it), and whether the last launch was its function's first */
    float first_launch_extra_ms;
    bool last_launch_first;
    unsigned char params[16][8]; /* the first 8 bytes behind each kernelParams[i] */
    int nparams_seen;            /* how many the mock read (from the PTX .param list) */
    int max_dynamic_shared_set;
    int sticky;
    int proc_version_asked; /* the cudaVersion of the last cuGetProcAddress */
    int capturing;          /* what cuStreamIsCapturing answers (a test sets it) */
    int module_loads;       /* cuModuleLoadDataEx calls that succeeded */
    int live_modules, live_allocs, live_streams; /* loaded / allocated and not yet freed */
    /* cuTensorMapEncodeTiled: the calls, the last call's arguments */
    int tmap_encodes;
    int tmap_data_type, tmap_rank, tmap_interleave, tmap_swizzle, tmap_l2, tmap_oob;
    uint64_t tmap_address, tmap_dims[5], tmap_strides[4];
    uint32_t tmap_box[5], tmap_element_strides[5];
    unsigned char maps_seen[2][128]; /* a tma_probe launch's two maps, after its 2 parameters */
    /* Several GPUs (set before the first tric_device_open): the device count (0: 1) and each
     * device's SM count (0: 132), which makes two devices different models for autotuning. */
    int devices;
    int device_sms[MOCK_MAX_DEVICES];
    int launches_on[MOCK_MAX_DEVICES];     /* launches run, per device */
    int module_loads_on[MOCK_MAX_DEVICES]; /* successful cuModuleLoadDataEx, per device */
    int live_retains[MOCK_MAX_DEVICES];    /* primary-context retains not yet released */
    int wrong_context_launches; /* launches refused: the function's context not current */
    /* cuLaunchKernelEx: its calls, and those whose attributes allow programmatic stream
     * serialization (a programmatic dependent launch) */
    int ex_launches, dependent_launches;
} MockState;

/* The state of the libcuda.so.1 this process loaded, when that is the mock; NULL for a real
 * driver or none loaded yet (the runtime loads it at its first tric_device_open). */
static inline MockState *mock_state_loaded(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    MockState *ms = lib ? (MockState *)dlsym(lib, "mock_state") : NULL;
    if (lib)
        dlclose(lib); /* a reference the runtime's stays beside: the library stays loaded */
    return ms;
}

#endif
