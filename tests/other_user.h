/* other_user.h: what the cache-trust tests need to play another user: the uid and gid of
 * `nobody` / `nogroup` (65534 where the names are missing), and whether the test may chown to
 * them (root may; elsewhere the case is skipped with a printed reason). */
#ifndef TRIC_TESTS_OTHER_USER_H
#define TRIC_TESTS_OTHER_USER_H

#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static inline uid_t nobody_uid(void)
{
    struct passwd *pw = getpwnam("nobody");
    return pw ? pw->pw_uid : 65534;
}

static inline gid_t nobody_gid(void)
{
    struct group *gr = getgrnam("nogroup");
    return gr ? gr->gr_gid : 65534;
}

static inline bool can_chown(const char *test)
{
    if (geteuid() == 0)
        return true;
    printf("skipped %s: it needs root to give a file to another user\n", test);
    return false;
}

#endif
