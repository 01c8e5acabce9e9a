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
 * old entry or the new one, never half of one. Anything that does not check out is a miss.
 *
 * Trust. The key material is no secret: whoever can write into the directory can plant an entry
 * that checks out, and the process that reads it runs that PTX (or takes that tuning). So only
 * what the user or root could have written is read, judged the way ssh's StrictModes and Python's
 * pyc directories judge it, by owners and modes:
 *   - the directory, opened once and checked with fstat on that descriptor: owned by the user or
 *     root, writable by no one else. With TRIC_CACHE_SHARED, its group may write too (it may then
 *     belong to another member), but a directory anyone may write to needs the sticky bit;
 *   - an entry, opened relative to that descriptor with O_NOFOLLOW and checked with fstat on its
 *     own descriptor before a byte is read: a regular file that only its owner may write, owned by
 *     the user or root -- or by anyone in a shared directory only its group may write to, where
 *     whoever could make a file is one of the people the user chose to share with.
 * Anything else is not used, and one warning (rt_warn) says why. Entries are written and renamed
 * through the same directory descriptor, so a path swapped after the check changes nothing. */
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

/* "<16 hex digits>.ptx": the entry's name in the cache directory. */
static void entry_name(char name[32], const char *material, size_t mlen) {
    snprintf(name, 32, "%016llx.ptx", (unsigned long long)rt_fnv1a(RT_FNV_OFFSET, material, mlen));
}

char *rt_cache_path(const char *dir, const char *material, size_t mlen) {
    char name[32];
    entry_name(name, material, mlen);
    StrBuf sb = {0};
    strbuf_printf(&sb, "%s/%s", dir, name);
    return strbuf_take(&sb);
}

/* ---- trust ------------------------------------------------------------------------------------ */

/* TRIC_CACHE_SHARED set (and not "0"): the user shares the cache with its directory's group. */
static bool cache_shared(void) {
    const char *v = getenv("TRIC_CACHE_SHARED");
    return v && *v && strcmp(v, "0") != 0;
}

/* The user or root: the only owners a private cache trusts (root can write anywhere anyway). */
static bool owned_by_user(const struct stat *st) {
    return st->st_uid == geteuid() || st->st_uid == 0;
}

/* Whether the process is in group gid (its effective group or a supplementary one). */
static bool in_group(gid_t gid) {
    if (getegid() == gid)
        return true;
    int n = getgroups(0, NULL);
    gid_t *groups = n > 0 ? malloc((size_t)n * sizeof *groups) : NULL;
    bool found = false;
    if (groups)
        n = getgroups(n, groups);
    for (int i = 0; groups && i < n; i++)
        found |= groups[i] == gid;
    free(groups);
    return found;
}

/* Whether only people the user trusts can write into the directory st describes; why says who
 * else can when not. A shared directory may belong to another user when its group is one of the
 * user's: only a member can give a file its group, so its owner is one of the group. */
static bool dir_trusted(const struct stat *st, bool shared, StrBuf *why) {
    unsigned mode = st->st_mode & 07777;
    if (!S_ISDIR(st->st_mode)) {
        strbuf_append(why, "it is not a directory");
        return false;
    }
    if (!owned_by_user(st) && !(shared && in_group(st->st_gid))) {
        strbuf_printf(why, "it is owned by uid %u, not by you (uid %u) or root",
                      (unsigned)st->st_uid, (unsigned)geteuid());
        if (shared)
            strbuf_printf(why, ", and its group (gid %u) is not one of yours",
                          (unsigned)st->st_gid);
        return false;
    }
    if (!shared && (mode & (S_IWGRP | S_IWOTH))) {
        strbuf_printf(why,
                      "it is writable by %s (mode %04o): make it private (chmod go-w), or set "
                      "TRIC_CACHE_SHARED=1 to share it with its group",
                      mode & S_IWOTH ? "others" : "its group", mode);
        return false;
    }
    if ((mode & S_IWOTH) && !(mode & S_ISVTX)) {
        strbuf_printf(why, "it is writable by anyone without the sticky bit (mode %04o)", mode);
        return false;
    }
    return true;
}

/* Whether an entry st of a directory that passed dir_trusted (dir) was written by someone the user
 * trusts; why says what is wrong when not. */
static bool entry_trusted(const struct stat *st, const struct stat *dir, bool shared, StrBuf *why) {
    unsigned mode = st->st_mode & 07777;
    if (!S_ISREG(st->st_mode)) {
        strbuf_append(why, "it is not a regular file");
        return false;
    }
    if (mode & (S_IWGRP | S_IWOTH)) {
        strbuf_printf(why, "it is writable by its group or others (mode %04o)", mode);
        return false;
    }
    /* Only the owner, the group's members and root can add a file to a shared directory that
     * others cannot write to; in one anyone can write to (sticky), only the user's own count. */
    bool members_only = shared && !(dir->st_mode & S_IWOTH);
    if (!owned_by_user(st) && !members_only) {
        strbuf_printf(why, "it is owned by uid %u, not by you (uid %u) or root",
                      (unsigned)st->st_uid, (unsigned)geteuid());
        return false;
    }
    return true;
}

/* ---- the directory ---------------------------------------------------------------------------- */

/* mkdir -p with mode for the levels it makes. Levels that exist are left as they are: only the
 * last, the cache directory itself, is judged (dir_open), and a path that an earlier level
 * redirects must still end at a directory that passes. */
static bool make_dirs(const char *dir, mode_t mode) {
    char *p = strdup(dir);
    if (!p)
        return false;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, mode) != 0 && errno != EEXIST) {
            free(p);
            return false;
        }
        *s = '/';
    }
    bool ok = mkdir(p, mode) == 0 || errno == EEXIST;
    free(p);
    return ok;
}

/* Opens the cache directory (made first when create: 0700, or 0770 less the umask when shared)
 * and judges it through the descriptor: the descriptor and its stat, or -1 with why. A directory
 * that is there but not trusted is warned about. */
static int dir_open(const char *dir, bool shared, bool create, struct stat *st, StrBuf *why) {
    if (create && !make_dirs(dir, shared ? 0770 : 0700)) {
        strbuf_printf(why, "%s: cannot create the cache directory: %s", dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        strbuf_printf(why, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0) {
        strbuf_printf(why, "%s: %s", dir, strerror(errno));
        close(fd);
        return -1;
    }
    StrBuf reason = {0};
    bool trusted = dir_trusted(st, shared, &reason);
    if (!trusted) {
        rt_warn("tric: not using the cache directory %s: %s (kernels are compiled and tuned "
                "without it)",
                dir, reason.data);
        strbuf_printf(why, "%s: not trusted: %s", dir, reason.data);
        close(fd);
        fd = -1;
    }
    strbuf_free(&reason);
    return fd;
}

/* ---- reading ---------------------------------------------------------------------------------- */

static bool read_all(int fd, StrBuf *sb) {
    char buf[16384];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            return !sb->failed;
        strbuf_append_n(sb, buf, (size_t)n);
    }
}

static void refuse_entry(const char *path, const char *reason, StrBuf *why) {
    rt_warn("tric: ignoring the cache entry %s: %s", path, reason);
    strbuf_printf(why, "%s: not trusted: %s", path, reason);
}

/* Opens entry name of the directory dirfd (path names it in messages) for reading: without
 * following a symlink (a planted link is refused, not followed) and without blocking (on a planted
 * FIFO), then judged on the open descriptor, so what was judged is what is read. The descriptor,
 * or -1 with why (an entry that is there but not trusted is warned about). */
static int entry_open(int dirfd, const struct stat *dir_st, bool shared, const char *name,
                      const char *path, StrBuf *why) {
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            refuse_entry(path, "it is a symbolic link", why);
        else
            strbuf_printf(why, "%s: no entry", path);
        return -1;
    }
    struct stat st;
    StrBuf reason = {0};
    bool trusted = false;
    if (fstat(fd, &st) != 0)
        strbuf_printf(&reason, "it cannot be examined: %s", strerror(errno));
    else
        trusted = entry_trusted(&st, dir_st, shared, &reason);
    if (!trusted) {
        refuse_entry(path, reason.data, why);
        close(fd);
        fd = -1;
    }
    strbuf_free(&reason);
    return fd;
}

/* Checks an entry's text against material and copies its payload out. */
static bool entry_decode(const StrBuf *file, const char *material, size_t mlen, const char *path,
                         StrBuf *payload, StrBuf *why) {
    unsigned long long key = 0, sum = 0;
    size_t header_mlen = 0, plen = 0;
    /* The header ends at the first blank line; the material may start with anything. */
    const char *blank = file->data ? strstr(file->data, "\n\n") : NULL;
    size_t header_end = blank ? (size_t)(blank - file->data) + 2 : 0;
    if (!blank || header_end > 200 ||
        sscanf(file->data, "tric-cache 1\nkey %16llx\nmaterial %zu\npayload %zu\nchecksum %16llx",
               &key, &header_mlen, &plen, &sum) != 4) {
        strbuf_printf(why, "%s: corrupt header", path);
        return false;
    }
    size_t body = file->len - header_end;
    const char *mat = file->data + header_end;
    if (header_mlen != mlen || plen > body || body - plen != mlen) {
        strbuf_printf(why, "%s: sizes do not match (truncated or another key)", path);
        return false;
    }
    if (key != rt_fnv1a(RT_FNV_OFFSET, material, mlen) || memcmp(mat, material, mlen) != 0) {
        strbuf_printf(why, "%s: the entry belongs to another key", path);
        return false;
    }
    if (sum != rt_fnv1a(rt_fnv1a(RT_FNV_OFFSET, mat, mlen), mat + mlen, plen)) {
        strbuf_printf(why, "%s: checksum mismatch", path);
        return false;
    }
    strbuf_clear(payload);
    strbuf_append_n(payload, mat + mlen, plen);
    if (plen == 0)
        strbuf_append(payload, "");
    return true;
}

bool rt_cache_lookup(const char *dir, const char *material, size_t mlen, StrBuf *payload,
                     StrBuf *why) {
    bool shared = cache_shared();
    struct stat dir_st;
    int dirfd = dir_open(dir, shared, false, &dir_st, why);
    if (dirfd < 0)
        return false;
    char name[32];
    entry_name(name, material, mlen);
    char *path = rt_cache_path(dir, material, mlen);
    StrBuf file = {0};
    int fd = entry_open(dirfd, &dir_st, shared, name, path, why);
    bool ok = false;
    if (fd >= 0 && !read_all(fd, &file))
        strbuf_printf(why, "%s: read failed", path);
    else if (fd >= 0)
        ok = entry_decode(&file, material, mlen, path, payload, why);
    if (fd >= 0)
        close(fd);
    strbuf_free(&file);
    free(path);
    close(dirfd);
    return ok;
}

/* ---- writing ---------------------------------------------------------------------------------- */

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
    bool shared = cache_shared();
    struct stat dir_st;
    int dirfd = dir_open(dir, shared, true, &dir_st, why);
    if (dirfd < 0)
        return false;
    static atomic_uint counter;
    char name[32];
    entry_name(name, material, mlen);
    StrBuf tmp = {0}, header = {0};
    /* Unique per process and per call: concurrent writers never share a temp file. */
    strbuf_printf(&tmp, "%s.tmp.%ld.%u", name, (long)getpid(), atomic_fetch_add(&counter, 1));
    strbuf_printf(
        &header, "tric-cache 1\nkey %016llx\nmaterial %zu\npayload %zu\nchecksum %016llx\n\n",
        (unsigned long long)rt_fnv1a(RT_FNV_OFFSET, material, mlen), mlen, plen,
        (unsigned long long)rt_fnv1a(rt_fnv1a(RT_FNV_OFFSET, material, mlen), payload, plen));
    bool ok = false;
    /* Readable by the group only when shared, and never writable but by its owner (the umask
     * may take more away). */
    int fd = openat(dirfd, tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    shared ? 0640 : 0600);
    if (fd < 0) {
        strbuf_printf(why, "%s/%s: %s", dir, tmp.data, strerror(errno));
        goto done;
    }
    ok = write_all(fd, header.data, header.len) && write_all(fd, material, mlen) &&
         write_all(fd, payload, plen) && fsync(fd) == 0;
    if (!ok)
        strbuf_printf(why, "%s/%s: write failed: %s", dir, tmp.data, strerror(errno));
    if (close(fd) != 0)
        ok = false;
    if (ok && renameat(dirfd, tmp.data, dirfd, name) != 0) {
        strbuf_printf(why, "%s/%s: rename failed: %s", dir, name, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlinkat(dirfd, tmp.data, 0);
done:
    close(dirfd);
    strbuf_free(&tmp);
    strbuf_free(&header);
    return ok;
}
