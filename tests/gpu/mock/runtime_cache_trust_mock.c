/* runtime_cache_trust_mock: the JIT and autotune caches refusing what others could have written,
 * end to end on the cuda device against the stand-in libcuda.so.1 (libcuda_mock.c). In each case
 * vector_add is compiled through the cache and must come out compiled afresh -- not from the
 * cache, its PTX byte for byte that of a compile with no cache -- with one warning naming the
 * path and the reason: a cache directory owned by another user, one writable by others (0777), an
 * entry that is a symlink to a valid entry, an entry owned by another user with the valid PTX, and
 * a group-writable directory holding a planted entry (this key's material, another PTX). Then a
 * planted tuning result (the slowest config) in a group-writable directory: the kernel is tuned
 * again and the fastest config chosen. Controls show each planted entry would have been taken had
 * it been trusted (TRIC_CACHE_SHARED=1 for the PTX, a private directory for the tuning). The cases
 * that chown to nobody need root (CI); elsewhere they print why they are skipped. Skips (77) when
 * the library found is not the mock. */
#include "examples/example_kernels.h"
#include "runtime/runtime.h"
#include "tests/other_user.h"
#include "tests/runtime_check.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";
static char reference[1 << 20]; /* vector_add's PTX compiled with no cache */

static char last_warning[2048];
static int nwarnings;

static void on_warning(const char *message, void *user)
{
    (void)user;
    snprintf(last_warning, sizeof last_warning, "%s", message);
    nwarnings++;
}

/* A fresh cache directory tmp/name (into dir[512]) holding vector_add's entry, whose path goes into
 * entry[1024] when given. */
static void make_cache(tric_device dev, const char *tmp, const char *name, char *dir, char *entry)
{
    snprintf(dir, 512, "%s/%s", tmp, name);
    setenv("TRIC_CACHE_DIR", dir, 1);
    tric_module m;
    tric_kernel k;
    if (ex_compile_vector_add(dev, va, &m, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles");
        return;
    }
    CHECK(!m->from_cache);
    tric_module_destroy(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 1", dir);
    CHECK(system(cmd) == 0);
    DIR *d = opendir(dir);
    for (struct dirent *e; entry && d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            snprintf(entry, 1024, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
}

/* Rewrites the entry at path (in dir) with its own key material and another payload, valid in
 * every other way: what anyone who can write into a cache directory can do. */
static void plant(const char *dir, const char *path, const char *payload)
{
    size_t mlen = 0;
    StrBuf file = {0};
    const char *text = strbuf_read_file(&file, path) ? file.data : NULL; /* NULL: empty too */
    const char *blank = text ? strstr(text, "\n\n") : NULL;
    if (!blank || sscanf(text, "tric-cache 1\nkey %*16s\nmaterial %zu", &mlen) != 1) {
        CHECK(!"the entry has a header");
        strbuf_free(&file);
        return;
    }
    StrBuf why = {0};
    CHECK(rt_cache_store(dir, blank + 2, mlen, payload, strlen(payload), &why));
    strbuf_free(&why);
    strbuf_free(&file);
}

/* Compiles vector_add through the cache at dir: compiled afresh, the reference PTX, and exactly
 * one warning naming path and reason. */
static void expect_fresh(tric_device dev, const char *dir, const char *path, const char *reason)
{
    setenv("TRIC_CACHE_DIR", dir, 1);
    int before = nwarnings;
    tric_module m;
    tric_kernel k;
    if (ex_compile_vector_add(dev, va, &m, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles");
        return;
    }
    CHECK(!m->from_cache);
    CHECK(strcmp(tric_module_code(m), reference) == 0);
    CHECK(nwarnings == before + 1);
    CHECK(strstr(last_warning, path) != NULL && strstr(last_warning, reason) != NULL);
    if (!strstr(last_warning, reason))
        fprintf(stderr, "  warning: %s\n  expected: %s\n", last_warning, reason);
    tric_module_destroy(m);
    /* The same cache again: no second warning. */
    if (ex_compile_vector_add(dev, va, &m, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles again");
        return;
    }
    CHECK(strcmp(tric_module_code(m), reference) == 0);
    CHECK(nwarnings == before + 1);
    tric_module_destroy(m);
}

/* Compiles vector_add through the cache at dir: the entry's PTX, from the cache. */
static void expect_hit(tric_device dev, const char *dir, const char *ptx)
{
    setenv("TRIC_CACHE_DIR", dir, 1);
    tric_module m;
    tric_kernel k;
    if (ex_compile_vector_add(dev, va, &m, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles");
        return;
    }
    CHECK(m->from_cache && strcmp(tric_module_code(m), ptx) == 0);
    tric_module_destroy(m);
}

static void test_directories(tric_device dev, const char *tmp)
{
    char dir[512], reason[128];
    make_cache(dev, tmp, "world", dir, NULL);
    CHECK(chmod(dir, 0777) == 0);
    expect_fresh(dev, dir, dir, "it is writable by others (mode 0777)");
    if (can_chown("the cache directory owned by another user")) {
        make_cache(dev, tmp, "foreign", dir, NULL);
        CHECK(chown(dir, nobody_uid(), 0) == 0);
        snprintf(reason, sizeof reason, "it is owned by uid %u", (unsigned)nobody_uid());
        expect_fresh(dev, dir, dir, reason);
    }
}

static void test_entries(tric_device dev, const char *tmp)
{
    char dir[512], entry[1024], elsewhere[512], other[1024];
    /* A symlink to a valid entry holding other PTX (in another cache of the user's): the link is
     * not followed, and the store that follows replaces it. */
    StrBuf planted = {0};
    strbuf_printf(&planted, "%s// planted\n", reference);
    make_cache(dev, tmp, "elsewhere", elsewhere, other);
    plant(elsewhere, other, planted.data);
    make_cache(dev, tmp, "symlink", dir, entry);
    CHECK(unlink(entry) == 0 && symlink(other, entry) == 0);
    expect_fresh(dev, dir, entry, "it is a symbolic link");
    struct stat st;
    CHECK(lstat(entry, &st) == 0 && S_ISREG(st.st_mode));
    expect_hit(dev, dir, reference);
    expect_hit(dev, elsewhere, planted.data); /* the link's target is as it was */
    strbuf_free(&planted);
    if (can_chown("the entry owned by another user")) {
        make_cache(dev, tmp, "foreign-entry", dir, entry);
        CHECK(chown(entry, nobody_uid(), 0) == 0);
        char reason[128];
        snprintf(reason, sizeof reason, "it is owned by uid %u", (unsigned)nobody_uid());
        expect_fresh(dev, dir, entry, reason);
        expect_hit(dev, dir, reference); /* rewritten by the fresh compile: the user's own now */
    }
}

/* A group-writable directory with an entry for this very key whose PTX is someone else's. */
static void test_planted(tric_device dev, const char *tmp)
{
    char dir[512], entry[1024];
    StrBuf planted = {0};
    strbuf_printf(&planted, "%s// planted by another member of the group\n", reference);
    make_cache(dev, tmp, "group", dir, entry);
    plant(dir, entry, planted.data);
    CHECK(chmod(dir, 0770) == 0);
    expect_fresh(dev, dir, dir, "it is writable by its group (mode 0770)");
    /* The control: shared on purpose, the group's entries are taken -- this one too. */
    setenv("TRIC_CACHE_SHARED", "1", 1);
    expect_hit(dev, dir, planted.data);
    unsetenv("TRIC_CACHE_SHARED");
    strbuf_free(&planted);
}

static tric_dim3 va_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)nargs, (void)user;
    int64_t block = 1024;
    tric_kernel_constexpr(config, "BLOCK_SIZE", &block);
    return (tric_dim3){(unsigned)((args[3].v.i32 + block - 1) / block), 1, 1};
}

/* Tunes vector_add over three configs (the mock times a launch as threads / 128 ms: config 1, two
 * warps, is the fastest, config 2, eight, the slowest) with the cache at dir: the config chosen. */
static int tune(tric_device dev, const char *dir)
{
    setenv("TRIC_CACHE_DIR", dir, 1);
    static const char *c1024[] = {"BLOCK_SIZE=1024"};
    tric_tune_config configs[] = {{c1024, 1, 4, 0}, {c1024, 1, 2, 0}, {c1024, 1, 8, 0}};
    tric_compile_options opt = ex_vector_add_tuned_options(configs, 3);
    tric_module mod;
    tric_kernel k;
    tric_buffer b;
    int chosen = -1;
    if (tric_module_compile_file(dev, va, &opt, &mod) != TRIC_SUCCESS) {
        CHECK(!"the tuned vector_add compiles");
        return -1;
    }
    CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 4096, &b) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(1000)};
    CHECK(tric_kernel_tune(k, va_grid, NULL, args, 4, NULL, &chosen) == TRIC_SUCCESS);
    tric_buffer_free(b);
    tric_module_destroy(mod);
    return chosen;
}

/* The tuning entry of dir (the one whose key material starts "tric-autotune"), into path[1024]. */
static bool find_tuning(const char *dir, char *path)
{
    bool found = false;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        snprintf(path, 1024, "%s/%s", dir, e->d_name);
        StrBuf file = {0};
        found = e->d_name[0] != '.' && strbuf_read_file(&file, path) && file.data &&
                strstr(file.data, "\n\ntric-autotune ") != NULL;
        strbuf_free(&file);
    }
    if (d)
        closedir(d);
    return found;
}

static void test_planted_tuning(tric_device dev, const char *tmp)
{
    char dir[512], entry[1024];
    snprintf(dir, sizeof dir, "%s/tune", tmp);
    CHECK(tune(dev, dir) == 1);
    if (!find_tuning(dir, entry)) {
        CHECK(!"the tuning is on disk");
        return;
    }
    plant(dir, entry, "config 2 BLOCK_SIZE=1024, num_warps=8\n");
    CHECK(chmod(dir, 0770) == 0);
    int before = nwarnings;
    CHECK(tune(dev, dir) == 1); /* timed again: the fastest */
    CHECK(nwarnings == before + 1 && strstr(last_warning, dir) &&
          strstr(last_warning, "writable by its group"));
    /* The control: in a private directory the same entry is taken as it is. */
    CHECK(chmod(dir, 0700) == 0);
    CHECK(tune(dev, dir) == 2);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib || !dlsym(lib, "mock_state")) {
        printf("SKIP: the libcuda.so.1 loaded is not the mock (%s)\n", tric_device_name(dev));
        return 77;
    }
    char tmp[] = "/tmp/tric-mock-trust-XXXXXX";
    if (!mkdtemp(tmp)) {
        printf("SKIP: cannot make a temp directory\n");
        return 77;
    }
    unsetenv("TRIC_CACHE_SHARED");
    tric_set_warning_handler(on_warning, NULL);
    tric_module m;
    tric_kernel k;
    setenv("TRIC_NO_CACHE", "1", 1); /* the reference: a compile that never saw a cache */
    if (ex_compile_vector_add(dev, va, &m, &k) != TRIC_SUCCESS) {
        printf("FAIL: vector_add does not compile: %s\n", tric_last_error());
        return 1;
    }
    unsetenv("TRIC_NO_CACHE");
    snprintf(reference, sizeof reference, "%s", tric_module_code(m));
    tric_module_destroy(m);

    test_directories(dev, tmp);
    test_entries(dev, tmp);
    test_planted(dev, tmp);
    test_planted_tuning(dev, tmp);

    tric_set_warning_handler(NULL, NULL);
    unsetenv("TRIC_CACHE_DIR");
    tric_device_close(dev);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
