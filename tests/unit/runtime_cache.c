/* runtime_cache: the on-disk JIT cache (runtime/cache.c) by its functions: the directory rules,
 * store and read back, every kind of damage read as a miss (then rewritten), a directory that
 * cannot be created, and concurrent writers never exposing a half-written entry. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)n + 1);
    *len = fread(data, 1, (size_t)n, f);
    fclose(f);
    return data;
}

static void spit(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
}

static bool lookup(const char *dir, const char *material, StrBuf *payload, StrBuf *why)
{
    strbuf_clear(payload);
    strbuf_clear(why);
    return rt_cache_lookup(dir, material, strlen(material), payload, why);
}

static void test_dir_rules(const char *tmp)
{
    setenv("TRIC_CACHE_DIR", tmp, 1);
    char *d = rt_cache_dir();
    CHECK(d && strcmp(d, tmp) == 0);
    free(d);
    unsetenv("TRIC_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/x/y", 1);
    d = rt_cache_dir();
    CHECK(d && strcmp(d, "/x/y/tric") == 0);
    free(d);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    d = rt_cache_dir();
    CHECK(d && strcmp(d, "/home/u/.cache/tric") == 0);
    free(d);
    setenv("TRIC_NO_CACHE", "1", 1);
    CHECK(rt_cache_dir() == NULL);
    unsetenv("TRIC_NO_CACHE");
    setenv("TRIC_CACHE_DIR", tmp, 1);
    /* FNV-1a test vectors (the reference's: "" and "a"). */
    CHECK(rt_fnv1a(RT_FNV_OFFSET, "", 0) == 0xcbf29ce484222325ULL);
    CHECK(rt_fnv1a(RT_FNV_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cULL);
}

static void test_store_and_damage(const char *dir)
{
    const char *key = "tric-jit 0.1.0\ntarget sm_90a\nsource 5:x=1\n";
    const char *ptx = "// tric.begin\n.version 8.0\n.target sm_90a\n";
    StrBuf payload = {0}, why = {0};
    CHECK(!lookup(dir, key, &payload, &why)); /* nothing yet */
    CHECK(rt_cache_store(dir, key, strlen(key), ptx, strlen(ptx), &why));
    CHECK(lookup(dir, key, &payload, &why) && strcmp(payload.data, ptx) == 0);

    char *path = rt_cache_path(dir, key, strlen(key));
    size_t len = 0;
    char *good = slurp(path, &len);
    if (!good || len < 20) {
        CHECK(!"the entry was not written");
        return;
    }

    /* One flipped payload byte: the checksum catches it. */
    char *bad = malloc(len);
    memcpy(bad, good, len);
    bad[len - 3] ^= 1;
    spit(path, bad, len);
    CHECK(!lookup(dir, key, &payload, &why) && strstr(why.data, "checksum mismatch"));
    /* Truncated. */
    spit(path, good, len - 10);
    CHECK(!lookup(dir, key, &payload, &why) && strstr(why.data, "sizes do not match"));
    /* Garbage header. */
    spit(path, "hello\n\nworld", 12);
    CHECK(!lookup(dir, key, &payload, &why) && strstr(why.data, "corrupt header"));
    /* Empty file. */
    spit(path, "", 0);
    CHECK(!lookup(dir, key, &payload, &why));
    /* Another key's entry under this key's name (a hash collision, or a renamed file). */
    const char *other = "tric-jit 0.1.0\ntarget sm_90a\nsource 5:x=2\n";
    CHECK(rt_cache_store(dir, other, strlen(other), "OTHER", 5, &why));
    char *other_path = rt_cache_path(dir, other, strlen(other));
    CHECK(rename(other_path, path) == 0);
    CHECK(!lookup(dir, key, &payload, &why) && strstr(why.data, "another key"));
    /* The caller recompiles and rewrites: the entry is good again. */
    CHECK(rt_cache_store(dir, key, strlen(key), ptx, strlen(ptx), &why));
    CHECK(lookup(dir, key, &payload, &why) && strcmp(payload.data, ptx) == 0);
    /* A material that starts with blank lines and an empty payload round-trip too. */
    const char *odd = "\n\nodd key";
    CHECK(rt_cache_store(dir, odd, strlen(odd), "", 0, &why));
    CHECK(lookup(dir, odd, &payload, &why) && payload.len == 0);

    free(bad);
    free(good);
    free(path);
    free(other_path);
    strbuf_free(&payload);
    strbuf_free(&why);
}

/* The build part of every key: tric's version and revision, libtric's file, LLVM, libdevice --
 * a libdevice that changes (another size or mtime) makes another key. */
static void test_build_key(const char *tmp)
{
    StrBuf a = {0}, b = {0}, c = {0};
    rt_build_key(&a, NULL);
    CHECK(strstr(a.data, "build " TRIC_VERSION " (git ") != NULL);
    CHECK(strstr(a.data, "\nlibrary ") != NULL && !strstr(a.data, "library unknown"));
    CHECK(strstr(a.data, "\ncodegen LLVM 19.") != NULL);
    CHECK(strstr(a.data, "\nlibdevice ") != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/libdevice.10.bc", tmp);
    spit(path, "BC\xc0\xde one", 8);
    rt_build_key(&b, path);
    CHECK(strstr(b.data, path) != NULL && strstr(b.data, " 8 ") != NULL);
    spit(path, "BC\xc0\xde two!", 9); /* rebuilt: another size */
    rt_build_key(&c, path);
    CHECK(strcmp(b.data, c.data) != 0);
    strbuf_clear(&c);
    remove(path);
    rt_build_key(&c, path); /* unreadable: no libdevice */
    CHECK(strstr(c.data, "\nlibdevice none\n") != NULL);
    strbuf_free(&a);
    strbuf_free(&b);
    strbuf_free(&c);
}

static void test_uncreatable_dir(void)
{
    StrBuf why = {0};
    CHECK(!rt_cache_store("/proc/tric-cannot-exist/cache", "k", 1, "p", 1, &why));
    CHECK(why.len > 0);
    StrBuf payload = {0};
    CHECK(!rt_cache_lookup("/proc/tric-cannot-exist/cache", "k", 1, &payload, &why));
    strbuf_free(&why);
    strbuf_free(&payload);
}

/* Four processes rewrite one entry with payloads of different lengths while this one reads it:
 * every read that succeeds returns one whole payload. */
static void test_concurrent_writers(const char *dir)
{
    const char *key = "concurrent key";
    enum { WRITERS = 4, WRITES = 60 };
    StrBuf why = {0}, payload = {0};
    char big[WRITERS][8192];
    for (int w = 0; w < WRITERS; w++) {
        memset(big[w], 'a' + w, sizeof big[w]);
        big[w][sizeof big[w] - 1 - (size_t)w * 1000] = 0;
    }
    CHECK(rt_cache_store(dir, key, strlen(key), big[0], strlen(big[0]), &why));
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            StrBuf e = {0};
            for (int i = 0; i < WRITES; i++)
                rt_cache_store(dir, key, strlen(key), big[w], strlen(big[w]), &e);
            _exit(0);
        }
    }
    int reads = 0, torn = 0;
    for (int i = 0; i < 300; i++) {
        if (!lookup(dir, key, &payload, &why)) {
            torn++; /* an entry always exists: a failed read would mean a torn one */
            continue;
        }
        reads++;
        bool whole = false;
        for (int w = 0; w < WRITERS; w++)
            whole |= strcmp(payload.data, big[w]) == 0;
        torn += !whole;
    }
    for (int w = 0; w < WRITERS; w++)
        waitpid(pids[w], NULL, 0);
    CHECK(reads > 0);
    CHECK(torn == 0);
    /* No temp file is left behind. */
    DIR *d = opendir(dir);
    int temps = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        temps += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    CHECK(temps == 0);
    strbuf_free(&why);
    strbuf_free(&payload);
}

int main(void)
{
    char tmp[] = "/tmp/tric-cache-test-XXXXXX";
    if (!mkdtemp(tmp)) {
        printf("SKIP: cannot make a temp directory\n");
        return 77;
    }
    char dir[256];
    snprintf(dir, sizeof dir, "%s/nested/cache", tmp); /* created on first store */
    test_dir_rules(tmp);
    test_store_and_damage(dir);
    test_uncreatable_dir();
    test_build_key(tmp);
    test_concurrent_writers(dir);
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
