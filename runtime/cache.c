/* cache.c: the on-disk JIT cache. One file per compiled kernel, DIR/<fnv1a-64 of key>.ptx:
 *
 *     tric-cache 1
 *     key 9f0c3a...            (16 hex digits: FNV-1a of the key material; also the file name)
 *     material 1234            (bytes of key material that follow the header)
 *     payload 56789            (bytes of PTX after the material)
 *     checksum 0a1b...         (FNV-1a of material then payload)
 *     <blank line>
 *     <material><payload>
 *
 * The whole key material (source, options, target, tric version) is stored and compared on read,
 * so a hash collision can never return another kernel's PTX. Writers make a temp file in the same
 * directory, fsync it and rename it over the entry (POSIX rename is atomic), so a reader sees the
 * old entry or the new one, never half of one. Anything that does not check out is a miss. */
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t rt_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL; /* the 64-bit FNV prime */
    }
    return h;
}

/* "<path> <size> <mtime in ns>" of a file, or "<path> missing". */
static void file_identity(StrBuf *sb, const char *path) {
    struct stat st;
    if (stat(path, &st) == 0)
        strbuf_printf(sb, "%zu:%s %lld %lld.%09ld", strlen(path), path, (long long)st.st_size,
                      (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    else
        strbuf_printf(sb, "%zu:%s missing", strlen(path), path);
}

static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static char library_identity[4200];

/* The file this code was loaded from (libtric.so, or the program that links it statically): a
 * rebuild changes its mtime even where the configure-time git revision did not change. */
static void find_library_identity(void) {
    Dl_info info;
    StrBuf sb = {0};
    if (dladdr((void *)rt_build_key, &info) && info.dli_fname && info.dli_fname[0])
        file_identity(&sb, info.dli_fname);
    else
        strbuf_append(&sb, "unknown");
    snprintf(library_identity, sizeof library_identity, "%s", sb.data ? sb.data : "unknown");
    strbuf_free(&sb);
}

void rt_build_key(StrBuf *sb, const char *libdevice_override) {
    pthread_once(&library_once, find_library_identity);
    strbuf_printf(sb, "build %s\nlibrary %s\ncodegen ", driver_build_id(), library_identity);
    driver_codegen_identity(sb);
    char buf[4096];
    const char *libdevice = driver_libdevice_path(libdevice_override, buf, sizeof buf);
    strbuf_append(sb, "\nlibdevice ");
    if (libdevice)
        file_identity(sb, libdevice);
    else
        strbuf_append(sb, "none");
    strbuf_append(sb, "\n");
}

char *rt_cache_dir(void) {
    const char *off = getenv("TRIC_NO_CACHE");
    if (off && *off && strcmp(off, "0") != 0)
        return NULL;
    StrBuf sb = {0};
    const char *dir = getenv("TRIC_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    if (dir && *dir)
        strbuf_append(&sb, dir);
    else if (xdg && *xdg)
        strbuf_printf(&sb, "%s/tric", xdg);
    else if (home && *home)
        strbuf_printf(&sb, "%s/.cache/tric", home);
    return strbuf_take(&sb);
}

char *rt_cache_path(const char *dir, const char *material, size_t mlen) {
    StrBuf sb = {0};
    strbuf_printf(&sb, "%s/%016llx.ptx", dir,
                  (unsigned long long)rt_fnv1a(RT_FNV_OFFSET, material, mlen));
    return strbuf_take(&sb);
}

bool rt_cache_lookup(const char *dir, const char *material, size_t mlen, StrBuf *payload,
                     StrBuf *why) {
    char *path = rt_cache_path(dir, material, mlen);
    StrBuf file = {0};
    bool ok = false;
    if (!strbuf_read_file(&file, path)) {
        strbuf_printf(why, "%s: no entry", path);
        goto done;
    }
    unsigned long long key = 0, sum = 0;
    size_t header_mlen = 0, plen = 0;
    /* The header ends at the first blank line; the material may start with anything. */
    const char *blank = file.data ? strstr(file.data, "\n\n") : NULL;
    size_t header_end = blank ? (size_t)(blank - file.data) + 2 : 0;
    if (!blank || header_end > 200 ||
        sscanf(file.data, "tric-cache 1\nkey %16llx\nmaterial %zu\npayload %zu\nchecksum %16llx",
               &key, &header_mlen, &plen, &sum) != 4) {
        strbuf_printf(why, "%s: corrupt header", path);
        goto done;
    }
    size_t body = file.len - header_end;
    const char *mat = file.data + header_end;
    if (header_mlen != mlen || plen > body || body - plen != mlen) {
        strbuf_printf(why, "%s: sizes do not match (truncated or another key)", path);
        goto done;
    }
    if (key != rt_fnv1a(RT_FNV_OFFSET, material, mlen) || memcmp(mat, material, mlen) != 0) {
        strbuf_printf(why, "%s: the entry belongs to another key", path);
        goto done;
    }
    if (sum != rt_fnv1a(rt_fnv1a(RT_FNV_OFFSET, mat, mlen), mat + mlen, plen)) {
        strbuf_printf(why, "%s: checksum mismatch", path);
        goto done;
    }
    strbuf_clear(payload);
    strbuf_append_n(payload, mat + mlen, plen);
    if (plen == 0)
        strbuf_append(payload, "");
    ok = true;
done:
    strbuf_free(&file);
    free(path);
    return ok;
}

/* mkdir -p, mode 0755 (0700 would be safer for $HOME, but the directory is often given). */
static bool make_dirs(const char *dir) {
    char *p = strdup(dir);
    if (!p)
        return false;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return false;
        }
        *s = '/';
    }
    bool ok = mkdir(p, 0755) == 0 || errno == EEXIST;
    free(p);
    return ok;
}

static bool write_all(int fd, const char *data, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        n -= (size_t)w;
    }
    return true;
}

bool rt_cache_store(const char *dir, const char *material, size_t mlen, const char *payload,
                    size_t plen, StrBuf *why) {
    if (!make_dirs(dir)) {
        strbuf_printf(why, "%s: cannot create the cache directory: %s", dir, strerror(errno));
        return false;
    }
    static atomic_uint counter;
    char *path = rt_cache_path(dir, material, mlen);
    StrBuf tmp = {0}, header = {0};
    /* Unique per process and per call: concurrent writers never share a temp file. */
    strbuf_printf(&tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
    strbuf_printf(
        &header, "tric-cache 1\nkey %016llx\nmaterial %zu\npayload %zu\nchecksum %016llx\n\n",
        (unsigned long long)rt_fnv1a(RT_FNV_OFFSET, material, mlen), mlen, plen,
        (unsigned long long)rt_fnv1a(rt_fnv1a(RT_FNV_OFFSET, material, mlen), payload, plen));
    bool ok = false;
    int fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        strbuf_printf(why, "%s: %s", tmp.data, strerror(errno));
        goto done;
    }
    ok = write_all(fd, header.data, header.len) && write_all(fd, material, mlen) &&
         write_all(fd, payload, plen) && fsync(fd) == 0;
    if (!ok)
        strbuf_printf(why, "%s: write failed: %s", tmp.data, strerror(errno));
    if (close(fd) != 0)
        ok = false;
    if (ok && rename(tmp.data, path) != 0) {
        strbuf_printf(why, "%s: rename failed: %s", path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(tmp.data);
done:
    strbuf_free(&tmp);
    strbuf_free(&header);
    free(path);
    return ok;
}
