/* runtime_cache_trust: what the disk cache (runtime/cache.c) agrees to read, by its functions.
 * Directories it makes are 0700 and entries 0600 whatever the umask. A directory owned by another
 * user, one writable by others (sticky or not) and one writable by its group are not used at all,
 * even with a valid entry inside (a planted one: the key material is no secret); an entry that is
 * a symlink, a FIFO, owned by another user or writable by its group is not read, and the next
 * store replaces it. Each refusal is one warning, given once, naming the path and the reason.
 * TRIC_CACHE_SHARED=1 accepts a group-writable directory and its members' entries, a world-writable
 * one only with the sticky bit and then only the user's own entries, and a directory of another
 * owner only when its group is one of the user's. The cases that need another owner chown to
 * nobody, which takes root (as CI runs); elsewhere they print why they are skipped. */
#include "runtime/runtime.h"
#include "tests/other_user.h"
#include "tests/runtime_check.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *key = "tric-jit trust test\nsource 3:x=1";
static const char *ptx = "// the real PTX\n";
static const char *planted = "// someone else's PTX\n";

/* Every warning the runtime gives, in order. */
static char warnings[16][1024];
static int nwarnings;

static void on_warning(const char *message, void *user)
{
    (void)user;
    if (nwarnings < 16)
        snprintf(warnings[nwarnings], sizeof warnings[0], "%s", message);
    nwarnings++;
}

/* Whether exactly one warning came since `before`, naming path and saying reason. */
static bool warned_once(int before, const char *path, const char *reason)
{
    if (nwarnings != before + 1) {
        fprintf(stderr, "  %d warnings, not 1 (last: %s)\n", nwarnings - before,
                nwarnings ? warnings[(nwarnings - 1) % 16] : "none");
        return false;
    }
    const char *w = warnings[before % 16];
    if (!strstr(w, path) || !strstr(w, reason) || strcmp(tric_last_warning(), w) != 0) {
        fprintf(stderr, "  warning: %s\n  expected %s and %s\n", w, path, reason);
        return false;
    }
    return true;
}

/* A fresh directory tmp/name holding the valid entry for key (payload text), mode applied last. */
static void make_cache(char *dir, size_t size, const char *tmp, const char *name, const char *text,
                       mode_t mode)
{
    snprintf(dir, size, "%s/%s", tmp, name);
    StrBuf why = {0};
    CHECK(rt_cache_store(dir, key, strlen(key), text, strlen(text), &why));
    CHECK(chmod(dir, mode) == 0);
    strbuf_free(&why);
}

static bool lookup(const char *dir, StrBuf *payload)
{
    StrBuf why = {0};
    strbuf_clear(payload);
    bool hit = rt_cache_lookup(dir, key, strlen(key), payload, &why);
    strbuf_free(&why);
    return hit;
}

static bool store(const char *dir, const char *text)
{
    StrBuf why = {0};
    bool ok = rt_cache_store(dir, key, strlen(key), text, strlen(text), &why);
    strbuf_free(&why);
    return ok;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 01000000;
}

/* What tric makes: every level 0700, the entry 0600, even with a umask that takes nothing away. */
static void test_modes(const char *tmp)
{
    char dir[512], level[512];
    snprintf(level, sizeof level, "%s/made", tmp);
    snprintf(dir, sizeof dir, "%s/made/cache", tmp);
    mode_t old = umask(0);
    CHECK(store(dir, ptx));
    umask(old);
    char *path = rt_cache_path(dir, key, strlen(key));
    CHECK(mode_of(level) == 0700 && mode_of(dir) == 0700);
    CHECK(mode_of(path) == 0600);
    StrBuf payload = {0};
    int before = nwarnings;
    CHECK(lookup(dir, &payload) && strcmp(payload.data, ptx) == 0);
    CHECK(nwarnings == before);
    free(path);
    strbuf_free(&payload);
}

/* Directories others can write to, or that others own: nothing is read or written there, however
 * valid the entry inside, and one warning says why. */
static void test_untrusted_dirs(const char *tmp)
{
    static const struct {
        const char *name;
        mode_t mode;
        const char *reason;
    } cases[] = {
        {"world", 0777, "it is writable by others (mode 0777)"},
        {"sticky", 01777, "it is writable by others (mode 1777)"},
        {"group", 0770, "it is writable by its group (mode 0770)"},
    };
    StrBuf payload = {0};
    char dir[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Planted: the entry holds this key's material, with another PTX. */
        make_cache(dir, sizeof dir, tmp, cases[i].name, planted, cases[i].mode);
        int before = nwarnings;
        CHECK(!lookup(dir, &payload));
        CHECK(warned_once(before, dir, cases[i].reason));
        CHECK(!store(dir, ptx)); /* no write either, and no second warning */
        CHECK(nwarnings == before + 1);
        CHECK(chmod(dir, 0700) == 0); /* the planted entry was left as it was */
        CHECK(lookup(dir, &payload) && strcmp(payload.data, planted) == 0);
    }
    if (can_chown("the directory owned by another user")) {
        make_cache(dir, sizeof dir, tmp, "foreign", ptx, 0755);
        CHECK(chown(dir, nobody_uid(), nobody_gid()) == 0);
        int before = nwarnings;
        CHECK(!lookup(dir, &payload));
        char reason[128];
        snprintf(reason, sizeof reason, "it is owned by uid %u, not by you (uid 0) or root",
                 (unsigned)nobody_uid());
        CHECK(warned_once(before, dir, reason));
        CHECK(!store(dir, ptx));
        CHECK(lookup(dir, &payload) == false && nwarnings == before + 1); /* warned once */
    }
    strbuf_free(&payload);
}

/* Entries that are not the user's regular, private files: not read, warned about, replaced by the
 * next store. */
static void test_untrusted_entries(const char *tmp)
{
    char dir[512], elsewhere[512];
    StrBuf payload = {0};
    /* A symlink to a valid entry (in another directory of the user's): never followed. */
    make_cache(elsewhere, sizeof elsewhere, tmp, "elsewhere", planted, 0700);
    make_cache(dir, sizeof dir, tmp, "symlink", ptx, 0700);
    char *path = rt_cache_path(dir, key, strlen(key));
    char *target = rt_cache_path(elsewhere, key, strlen(key));
    CHECK(unlink(path) == 0 && symlink(target, path) == 0);
    int before = nwarnings;
    CHECK(!lookup(dir, &payload));
    CHECK(warned_once(before, path, "it is a symbolic link"));
    CHECK(store(dir, ptx) && mode_of(path) == 0600); /* the link itself is replaced */
    CHECK(lookup(dir, &payload) && strcmp(payload.data, ptx) == 0);
    CHECK(lookup(elsewhere, &payload) && strcmp(payload.data, planted) == 0);
    free(path);
    free(target);

    /* Writable by the group. */
    make_cache(dir, sizeof dir, tmp, "groupentry", ptx, 0700);
    path = rt_cache_path(dir, key, strlen(key));
    CHECK(chmod(path, 0664) == 0);
    before = nwarnings;
    CHECK(!lookup(dir, &payload));
    CHECK(warned_once(before, path, "it is writable by its group or others (mode 0664)"));
    CHECK(store(dir, ptx) && lookup(dir, &payload));
    free(path);

    /* A FIFO: the open does not wait for a writer. */
    make_cache(dir, sizeof dir, tmp, "fifo", ptx, 0700);
    path = rt_cache_path(dir, key, strlen(key));
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    before = nwarnings;
    CHECK(!lookup(dir, &payload));
    CHECK(warned_once(before, path, "it is not a regular file"));
    free(path);

    if (can_chown("the entry owned by another user")) {
        make_cache(dir, sizeof dir, tmp, "foreignentry", ptx, 0700);
        path = rt_cache_path(dir, key, strlen(key));
        CHECK(chown(path, nobody_uid(), nobody_gid()) == 0);
        before = nwarnings;
        CHECK(!lookup(dir, &payload));
        char reason[128];
        snprintf(reason, sizeof reason, "it is owned by uid %u, not by you (uid 0) or root",
                 (unsigned)nobody_uid());
        CHECK(warned_once(before, path, reason));
        CHECK(store(dir, ptx) && lookup(dir, &payload)); /* rewritten: the user's now */
        free(path);
    }
    strbuf_free(&payload);
}

/* TRIC_CACHE_SHARED=1: the group may write; anyone only with the sticky bit, and then only the
 * user's own entries are read. */
static void test_shared(const char *tmp)
{
    setenv("TRIC_CACHE_SHARED", "1", 1);
    char dir[512];
    StrBuf payload = {0};
    make_cache(dir, sizeof dir, tmp, "team", ptx, 0770);
    int before = nwarnings;
    CHECK(lookup(dir, &payload) && strcmp(payload.data, ptx) == 0);
    char *path = rt_cache_path(dir, key, strlen(key));
    mode_t old = umask(0);
    CHECK(store(dir, ptx) && mode_of(path) == 0640); /* the group reads, only the owner writes */
    umask(old);
    free(path);
    snprintf(dir, sizeof dir, "%s/teammade", tmp);
    old = umask(0);
    CHECK(store(dir, ptx) && mode_of(dir) == 0770);
    umask(old);
    CHECK(nwarnings == before);

    make_cache(dir, sizeof dir, tmp, "shared-world", ptx, 0777);
    CHECK(!lookup(dir, &payload));
    CHECK(warned_once(before, dir, "it is writable by anyone without the sticky bit (mode 0777)"));
    make_cache(dir, sizeof dir, tmp, "shared-sticky", ptx, 01777);
    CHECK(lookup(dir, &payload));

    if (can_chown("the shared cases with other owners")) {
        /* A member's entry in a directory only the group can write to: read. */
        make_cache(dir, sizeof dir, tmp, "team-member", ptx, 0770);
        path = rt_cache_path(dir, key, strlen(key));
        CHECK(chown(path, nobody_uid(), nobody_gid()) == 0);
        CHECK(lookup(dir, &payload) && strcmp(payload.data, ptx) == 0);
        free(path);
        /* Someone's entry in a directory anyone can write to: not read. */
        make_cache(dir, sizeof dir, tmp, "sticky-foreign", ptx, 01777);
        path = rt_cache_path(dir, key, strlen(key));
        CHECK(chown(path, nobody_uid(), nobody_gid()) == 0);
        before = nwarnings;
        CHECK(!lookup(dir, &payload));
        CHECK(warned_once(before, path, "it is owned by uid"));
        free(path);
        /* A directory of another owner: used when its group is one of the user's (root's 0). */
        make_cache(dir, sizeof dir, tmp, "team-owner", ptx, 0770);
        CHECK(chown(dir, nobody_uid(), 0) == 0);
        CHECK(lookup(dir, &payload));
        CHECK(chown(dir, nobody_uid(), nobody_gid()) == 0);
        before = nwarnings;
        CHECK(!lookup(dir, &payload));
        char reason[128];
        snprintf(reason, sizeof reason, "and its group (gid %u) is not one of yours",
                 (unsigned)nobody_gid());
        CHECK(warned_once(before, dir, reason));
    }
    /* "0" is off: a group-writable directory is refused again. */
    setenv("TRIC_CACHE_SHARED", "0", 1);
    snprintf(dir, sizeof dir, "%s/team", tmp);
    before = nwarnings;
    CHECK(!lookup(dir, &payload));
    CHECK(warned_once(before, dir, "writable by its group"));
    unsetenv("TRIC_CACHE_SHARED");
    strbuf_free(&payload);
}

int main(void)
{
    char tmp[] = "/tmp/tric-trust-test-XXXXXX";
    if (!mkdtemp(tmp)) {
        printf("SKIP: cannot make a temp directory\n");
        return 77;
    }
    unsetenv("TRIC_CACHE_SHARED");
    tric_set_warning_handler(on_warning, NULL);
    CHECK(strcmp(tric_last_warning(), "") == 0);
    test_modes(tmp);
    test_untrusted_dirs(tmp);
    test_untrusted_entries(tmp);
    test_shared(tmp);
    tric_set_warning_handler(NULL, NULL);
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
