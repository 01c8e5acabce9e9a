/* driver_meta_tensor_map: the metadata block's tensor_map lines (docs/ptx-metadata.md): written
 * from KernelMeta.tmaps in the exact syntax, read back to the same maps (ranks 1 to 5, unbounded
 * and product values, every swizzle), through kernel_meta_read and kernel_meta_read_all; every
 * kind of malformed line refused with a message naming it. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The parameters every block here declares: a b M N S c U K. */
static const char head[] = "// tric.begin\n"
                           "// tric.version 0.1.0\n"
                           "// tric.kernel k\n"
                           "// tric.target sm_90a\n"
                           "// tric.num_warps 4\n"
                           "// tric.threads 128\n"
                           "// tric.shared 0\n"
                           "// tric.params *fp16:16 *bf16 i32 i32 i64 *fp8e4nv u32 i32:16\n"
                           "// tric.param_names a b M N S c U K\n";

static LaunchValue lv_const(int64_t c) { return (LaunchValue){.constant = c}; }
static LaunchValue lv_unbounded(void) { return (LaunchValue){.constant = 1, .unbounded = true}; }
static LaunchValue lv_params(int64_t c, int n, const int *params)
{
    LaunchValue v = {.constant = c, .nparams = n};
    memcpy(v.params, params, sizeof(int) * (size_t)n);
    return v;
}

/* A meta with the head's parameters and four maps: ranks 2, 3, 1 and 5; swizzles 128, 64, 0, 32. */
static void example_meta(KernelMeta *m)
{
    StrBuf err = {0};
    char text[2048];
    snprintf(text, sizeof text, "%s// tric.end\n", head);
    CHECK(kernel_meta_read(text, m, &err));
    strbuf_free(&err);
    TensorMap *t = m->tmaps;
    /* fp16 a[M, *] with row stride N */
    t[0] = (TensorMap){.base_param = 0, .dtype = DT_F16, .rank = 2, .swizzle = 128};
    t[0].dims[0] = lv_unbounded();
    t[0].dims[1] = lv_params(1, 1, (int[]){2});
    t[0].strides[0] = lv_const(1);
    t[0].strides[1] = lv_params(1, 1, (int[]){3});
    t[0].box[0] = 64, t[0].box[1] = 128;
    /* bf16 b: products with and without a constant, a negative constant */
    t[1] = (TensorMap){.base_param = 1, .dtype = DT_BF16, .rank = 3, .swizzle = 64};
    t[1].dims[0] = lv_params(2, 2, (int[]){2, 3});
    t[1].dims[1] = lv_const(64);
    t[1].dims[2] = lv_const(1);
    t[1].strides[0] = lv_const(1);
    t[1].strides[1] = lv_params(1, 3, (int[]){3, 4, 6});
    t[1].strides[2] = lv_params(-3, 4, (int[]){2, 2, 3, 7});
    t[1].box[0] = 32, t[1].box[1] = 8, t[1].box[2] = 1;
    /* fp8 c, one dim */
    t[2] = (TensorMap){.base_param = 5, .dtype = DT_F8E4NV, .rank = 1, .swizzle = 0};
    t[2].dims[0] = lv_params(1, 1, (int[]){4});
    t[2].strides[0] = lv_const(1);
    t[2].box[0] = 256;
    /* fp32 a, five dims */
    t[3] = (TensorMap){.base_param = 0, .dtype = DT_F32, .rank = 5, .swizzle = 32};
    for (int d = 0; d < 5; d++) {
        t[3].dims[d] = d % 2 ? lv_unbounded() : lv_const(d + 1);
        t[3].strides[d] = lv_params(16 << d, d ? 1 : 0, (int[]){7});
        t[3].box[d] = 8 - d;
    }
    t[3].strides[0] = lv_const(1);
    m->ntmaps = 4;
}

static const char *expected_lines[] = {
    "// tric.tensor_map fp16 base=0 dims=*,p2 strides=1,p3 box=64,128 swizzle=128\n",
    "// tric.tensor_map bf16 base=1 dims=2*p2*p3,64,1 strides=1,p3*p4*p6,-3*p2*p2*p3*p7 "
    "box=32,8,1 swizzle=64\n",
    "// tric.tensor_map fp8e4nv base=5 dims=p4 strides=1 box=256 swizzle=0\n",
    "// tric.tensor_map fp32 base=0 dims=1,*,3,*,5 strides=1,32*p7,64*p7,128*p7,256*p7 "
    "box=8,7,6,5,4 swizzle=32\n",
};

static void test_round_trip(void)
{
    KernelMeta m;
    example_meta(&m);
    StrBuf out = {0};
    kernel_meta_write(&out, &m);
    /* The maps come last, in index order, right before the end line. */
    StrBuf tail = {0};
    for (int i = 0; i < 4; i++)
        strbuf_append(&tail, expected_lines[i]);
    strbuf_append(&tail, "// tric.end\n");
    CHECK(out.len >= tail.len && !strcmp(out.data + out.len - tail.len, tail.data));
    if (out.len < tail.len || strcmp(out.data + out.len - tail.len, tail.data))
        fprintf(stderr, "written:\n%s", out.data);

    KernelMeta back;
    StrBuf err = {0};
    CHECK(kernel_meta_read(out.data, &back, &err));
    CHECK(back.ntmaps == 4);
    for (int i = 0; i < 4 && i < back.ntmaps; i++)
        CHECK(tensor_map_equal(&back.tmaps[i], &m.tmaps[i]));
    /* Written again, the same text. */
    StrBuf again = {0};
    kernel_meta_write(&again, &back);
    CHECK(!strcmp(again.data, out.data));

    /* Two blocks (a module of two kernels): each keeps its own maps. */
    KernelMeta second = m;
    snprintf(second.name, sizeof second.name, "k2");
    second.ntmaps = 1;
    second.tmaps[0] = m.tmaps[2];
    StrBuf two = {0};
    kernel_meta_write(&two, &m);
    kernel_meta_write(&two, &second);
    strbuf_append(&two, ".version 8.0\n");
    KernelMeta *all = NULL;
    CHECK(kernel_meta_read_all(two.data, &all, &err) == 2);
    if (all) {
        CHECK(all[0].ntmaps == 4 && all[1].ntmaps == 1);
        CHECK(tensor_map_equal(&all[1].tmaps[0], &m.tmaps[2]));
        CHECK(tensor_map_equal(&all[0].tmaps[3], &m.tmaps[3]));
        free(all);
    }
    /* A block without maps reads none; an unknown key is still ignored. */
    char text[2048];
    snprintf(text, sizeof text, "%s// tric.later_key x=1\n// tric.end\n", head);
    CHECK(kernel_meta_read(text, &back, &err) && back.ntmaps == 0);
    strbuf_free(&err);
    strbuf_free(&out);
    strbuf_free(&tail);
    strbuf_free(&again);
    strbuf_free(&two);
}

/* The block with one more line; its error text (kernel_meta_read and _read_all agree). */
static void expect_error(const char *lines, const char *message)
{
    char text[8192];
    snprintf(text, sizeof text, "%s%s// tric.end\n", head, lines);
    KernelMeta m;
    StrBuf err = {0};
    bool ok = kernel_meta_read(text, &m, &err);
    CHECK(!ok);
    CHECK(err.data && !strcmp(err.data, message));
    if (ok || !err.data || strcmp(err.data, message))
        fprintf(stderr, "for:\n%s  expected: %s\n  got:      %s\n", lines, message,
                err.data ? err.data : "(none)");
    strbuf_clear(&err);
    KernelMeta *all = NULL;
    CHECK(kernel_meta_read_all(text, &all, &err) == -1 && !all);
    CHECK(err.data && !strcmp(err.data, message));
    strbuf_free(&err);
}

#define BAD(line) "bad tric.tensor_map line '" line "' in the tric metadata block: "

static void test_malformed(void)
{
    static const struct {
        const char *value, *why;
    } cases[] = {
        {"fp17 base=0 dims=*,p2 strides=1,p3 box=64,128 swizzle=128",
         "it starts with the element type (fp16, bf16, fp32, ...)"},
        {"fp16", "it starts with the element type (fp16, bf16, fp32, ...)"},
        {"fp16 base=0 dims=*,p2 strides=1,p3 box=64,128", "it needs base, dims, strides, box and "
                                                          "swizzle"},
        {"fp16 base=0 dims=*,p2 strides=1,p3 box=64,128 swizzle=16", "swizzle is 0, 32, 64 or 128"},
        {"fp16 base=0 dims=*,p2 strides=1,p3 box=64,0 swizzle=0",
         "a box size is an integer from 1 to 256 (cuTensorMapEncodeTiled)"},
        {"fp16 base=0 dims=*,p2 strides=1,p3 box=64,300 swizzle=0",
         "a box size is an integer from 1 to 256 (cuTensorMapEncodeTiled)"},
        {"fp16 base=0 dims=*,q2 strides=1,p3 box=64,128 swizzle=0",
         "a value is '*' or factors joined by '*': an integer first, then pK"},
        {"fp16 base=0 dims=*,2**p2 strides=1,p3 box=64,128 swizzle=0",
         "a value is '*' or factors joined by '*': an integer first, then pK"},
        {"fp16 base=0 dims=*,p2*2 strides=1,p3 box=64,128 swizzle=0",
         "a value is '*' or factors joined by '*': an integer first, then pK"},
        {"fp16 base=0 dims=*, strides=1,p3 box=64,128 swizzle=0",
         "a value is '*' or factors joined by '*': an integer first, then pK"},
        {"fp16 base=0 dims=*,px strides=1,p3 box=64,128 swizzle=0",
         "a parameter factor is pK with K a parameter's index"},
        {"fp16 base=0 dims=*,p2*p2*p2*p2*p2 strides=1,p3 box=64,128 swizzle=0",
         "a value has at most 4 parameter factors"},
        {"fp16 base=0 dims=1,1,1,1,1,1 strides=1,1,1,1,1,1 box=8,1,1,1,1,1 swizzle=0",
         "a tensor map has at most 5 dims"},
        {"fp16 base=a dims=*,p2 strides=1,p3 box=64,128 swizzle=0", "base is a parameter's index"},
        {"fp16 base=0 base=0 dims=*,p2 strides=1,p3 box=64,128 swizzle=0", "a key appears twice"},
        {"fp16 base=0 dims=*,p2 strides=1,p3 box=64,128 swizzle=0 l2=256",
         "the keys are base, dims, strides, box, swizzle"},
        {"fp16 base=0 dims=*,p2 strides=1 box=64,128 swizzle=0",
         "dims, strides and box have one value per dim each"},
        {"fp16 base=0 dims=*,p2 strides=1,p3 box swizzle=0",
         "after the element type come key=value items"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[512], message[1024];
        snprintf(line, sizeof line, "// tric.tensor_map %s\n", cases[i].value);
        snprintf(message, sizeof message,
                 "bad tric.tensor_map line '%s' in the tric metadata block: %s", cases[i].value,
                 cases[i].why);
        expect_error(line, message);
    }
    /* Parameters that are not what the map reads them as (checked once the block is read). */
    expect_error(
        "// tric.tensor_map fp16 base=2 dims=*,p2 strides=1,p3 box=64,128 swizzle=0\n",
        BAD("fp16 base=2 dims=*,p2 strides=1,p3 box=64,128 swizzle=0") "parameter 2 is not a "
                                                                       "pointer parameter "
                                                                       "(tric.params lists 8)");
    expect_error(
        "// tric.tensor_map fp16 base=9 dims=*,p2 strides=1,p3 box=64,128 swizzle=0\n",
        BAD("fp16 base=9 dims=*,p2 strides=1,p3 box=64,128 swizzle=0") "parameter 9 is not a "
                                                                       "pointer parameter "
                                                                       "(tric.params lists 8)");
    expect_error(
        "// tric.tensor_map fp16 base=0 dims=*,p1 strides=1,p3 box=64,128 swizzle=0\n",
        BAD("fp16 base=0 dims=*,p1 strides=1,p3 box=64,128 swizzle=0") "parameter 1 is not an "
                                                                       "integer parameter "
                                                                       "(tric.params lists 8)");
    expect_error(
        "// tric.tensor_map fp16 base=0 dims=*,p2 strides=1,4*p8 box=64,128 swizzle=0\n",
        BAD("fp16 base=0 dims=*,p2 strides=1,4*p8 box=64,128 swizzle=0") "parameter 8 is not an "
                                                                         "integer parameter "
                                                                         "(tric.params lists 8)");
    /* At most TRIC_MAX_TENSOR_MAPS. */
    StrBuf many = {0};
    for (int i = 0; i <= TRIC_MAX_TENSOR_MAPS; i++)
        strbuf_append(&many, "// tric.tensor_map fp16 base=0 dims=p2 strides=1 box=8 swizzle=0\n");
    expect_error(many.data,
                 BAD("fp16 base=0 dims=p2 strides=1 box=8 swizzle=0") "a kernel reads at most 8 "
                                                                      "tensor maps");
    strbuf_free(&many);
}

int main(void)
{
    test_round_trip();
    test_malformed();
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
