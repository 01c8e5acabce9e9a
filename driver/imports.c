/* imports.c: cross-file imports, linked into one module before sema.
 *
 * Kernels live in Python packages: `from .utils import helper`, `from ..ops import BLOCK as B`,
 * `import pkg.kernels as K` then `K.helper(x)` or `K.CONST` inside a @triton.jit function. The
 * importing module is linked here, so that sema sees one module: every imported @jit function and
 * module-level assignment a kernel reaches is added to it under a qualified name ("utils.helper",
 * a name no source can spell), the references to it are renamed to that name, and the imported
 * definitions' own references (to their module's functions, constants and imports) are renamed the
 * same way, so each keeps reading its own module, as Python's globals would.
 *
 * Where a module is looked for (docs/language.md "Imports"):
 *   relative (leading dots): from the importing file's directory, each dot after the first one
 *     level up;
 *   absolute: the importing file's directory, then each include directory in order (-I DIR,
 *     tric_compile_options.include_dirs);
 *   in a directory D, module a.b.c is D/a/b/c.py, then D/a/b/c.tri, then D/a/b/c/__init__.py.
 * Triton's own modules (triton, triton.language...) are sema's and never looked for, nor are the
 * relative imports a file of Triton's package makes of them (`from .. import language as tl`)
 * where no file answers: triton_relative_imports makes those absolute. A module that
 * is not found is an error only where a kernel uses a name imported from it; the message lists the
 * files tried. Definitions are linked on first use, so import cycles work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"

/* One module file read and parsed. */
typedef struct LoadedModule {
    const char *path; /* as opened */
    const char *real; /* realpath, to know a module met again */
    const char *qual; /* the prefix of its linked names: "utils", "pkg.kernels" */
    Module *m;        /* NULL: it did not parse (the errors were reported) */
    const SrcFile *file;
} LoadedModule;

/* What a name of some module is bound to by its import statements. */
typedef enum BindKind {
    BIND_MEMBER,  /* `from M import a as name`: module mod's definition `a` */
    BIND_MODULE,  /* `import M as name`, `from P import M`: the whole module mod */
    BIND_MISSING, /* imported from a module that was not found: tried lists the files */
    BIND_TRITON,  /* imported from Triton: sema's */
} BindKind;

typedef struct ImportBind {
    const char *name; /* dotted for `import a.b` (no `as`) */
    BindKind kind;
    int mod;            /* index into Linker.mods */
    const char *member; /* BIND_MEMBER */
    const char *module_text;
    const char *tried;
    SrcLoc loc; /* the import statement */
} ImportBind;

/* A definition linked into the root module: (module, name) -> qualified name. */
typedef struct Linked {
    int mod;
    const char *name, *qual;
} Linked;

typedef struct Linker {
    Arena *a;
    Diag *diag;
    const char *const *dirs;
    int ndirs;
    Module *root;
    LoadedModule *mods; /* mods[0] is the root */
    int nmods, modcap;
    Linked *linked;
    int nlinked, linkcap;
    Stmt **globals; /* the imported constants and imports, put before the root's */
    int nglobals, gcap;
    int fcap;
    StrBuf *key;        /* driver_import_key: every file read, appended */
    const HostEnv *env; /* the host environment each file's module-level ifs are decided on */
    int reexports;      /* re-exports followed now (import_bind), bounding a cycle of them */
} Linker;

/* ---- finding files ---------------------------------------------------------------------------- */

static const char *dir_of(Arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    if (slash == path)
        return "/";
    return arena_strndup(a, path, (size_t)(slash - path));
}

static char *read_whole(const char *path, size_t *len)
{
    StrBuf sb = {0};
    if (!strbuf_read_file(&sb, path) || sb.failed) {
        strbuf_free(&sb);
        return NULL;
    }
    *len = sb.len;
    return sb.data ? strbuf_take(&sb) : calloc(1, 1);
}

/* dir/a/b/c.py, .tri, /__init__.py for dotted "a.b.c": the first that opens, or NULL with the
 * names tried appended to tried. */
static const char *find_in_dir(Linker *lk, const char *dir, const char *dotted, StrBuf *tried)
{
    char *rel = arena_strdup(lk->a, dotted);
    for (char *p = rel; *p; p++)
        if (*p == '.')
            *p = '/';
    static const char *const suffixes[] = {".py", ".tri", "/__init__.py"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        const char *path = *rel ? arena_printf(lk->a, "%s/%s%s", dir, rel, suffixes[i])
                                : arena_printf(lk->a, "%s%s", dir, suffixes[i]);
        FILE *f = fopen(path, "rb");
        if (f) {
            fclose(f);
            return path;
        }
        if (*rel || i == 2)
            strbuf_printf(tried, "%s%s", tried->len ? ", " : "", path);
    }
    return NULL;
}

/* Triton's modules are sema's (its builtins), never files. */
static bool is_triton_module(const char *dotted)
{
    size_t n = strcspn(dotted, ".");
    /* torch too: sema reads its dtypes and finfo/iinfo constants (FlagGems' topk.py
     * `tl.constexpr(torch.finfo(torch.float16).min)`); any other use is sema's error */
    return (n == 6 && !strncmp(dotted, "triton", 6)) || (n == 5 && !strncmp(dotted, "torch", 5));
}

static int load(Linker *lk, const char *path, const char *qual);

/* The names under which Triton's own modules are imported (`import triton`, `import
 * triton.language as tl`): a module that re-exports one keeps the name. */
static bool reexports_triton(const char *name)
{
    return !strcmp(name, "tl") || !strcmp(name, "triton");
}

/* The file of module `text` (leading dots: relative) imported from the file at from_path, or
 * NULL with the files tried appended to tried. */
static const char *find_module(Linker *lk, const char *from_path, const char *text, StrBuf *tried)
{
    const char *base = dir_of(lk->a, from_path);
    int dots = 0;
    while (text[dots] == '.')
        dots++;
    const char *dotted = text + dots;
    const char *path = NULL;
    if (dots > 0) {
        const char *dir = base;
        for (int i = 1; i < dots; i++)
            dir = arena_printf(lk->a, "%s/..", dir);
        path = find_in_dir(lk, dir, dotted, tried);
    } else {
        path = find_in_dir(lk, base, dotted, tried);
        for (int i = 0; !path && i < lk->ndirs; i++)
            if (lk->dirs[i])
                path = find_in_dir(lk, lk->dirs[i], dotted, tried);
    }
    return path;
}

/* The module `text` imported from module `from`: its index in mods, or -1 with the files tried
 * in tried. */
static int resolve(Linker *lk, int from, const char *text, StrBuf *tried)
{
    const char *path = find_module(lk, lk->mods[from].path, text, tried);
    if (!path)
        return -1;
    const char *dotted = text + strspn(text, ".");
    const char *qual = *dotted ? dotted : arena_printf(lk->a, "%s", dir_of(lk->a, path));
    return load(lk, path, qual);
}

/* ---- Triton's own relative imports --------------------------------------------------------------- */

static bool name_in(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

/* Triton's subpackages (python/triton/language, runtime, ...). */
static bool is_triton_subpackage(const char *name)
{
    static const char *const names[] = {"language", "runtime", "compiler", "testing",
                                        "ops",      "tools",   "backends"};
    return name_in(name, names, sizeof names / sizeof names[0]);
}

/* What Triton's package exports at its top level (python/triton/__init__.py): the names its own
 * files import from `..`. */
static bool is_triton_top_level_name(const char *name)
{
    static const char *const names[] = {
        "Config",
        "autotune",
        "cdiv",
        "heuristics",
        "jit",
        "next_power_of_2",
        "JITFunction",
        "KernelInterface",
        "OutOfResources",
        "MockTensor",
        "TensorWrapper",
        "reinterpret",
        "compile",
        "CompilationError",
        "must_use_result",
        "knobs",
    };
    return is_triton_subpackage(name) || name_in(name, names, sizeof names / sizeof names[0]);
}

/* The Triton module a relative import inside Triton's package names, "triton" for `from .. import
 * language as tl` (triton/ops/matmul.py) and "triton.language.extra" for `from ..language.extra
 * import libdevice`; NULL when `from` is not relative or the names are not Triton's. */
static const char *triton_module_of_relative(Linker *lk, const Stmt *st)
{
    const char *from = st->import_.module;
    if (!from || from[0] != '.' || st->import_.n == 0)
        return NULL;
    const char *dotted = from + strspn(from, ".");
    if (*dotted) {
        size_t first = strcspn(dotted, ".");
        char *head = arena_strndup(lk->a, dotted, first);
        return is_triton_subpackage(head) ? arena_printf(lk->a, "triton.%s", dotted) : NULL;
    }
    for (int k = 0; k < st->import_.n; k++)
        if (!st->import_.names[k] || !is_triton_top_level_name(st->import_.names[k]))
            return NULL;
    return "triton";
}

/* A file lifted out of Triton's package keeps its relative imports of Triton (`from .. import
 * language as tl`, `from .. import Config, autotune, cdiv, heuristics, jit`): where the module
 * they name is no file (neither the package nor, for each name, a submodule of it), the statement
 * is made the absolute import it stands for (`from triton import language as tl`), which sema and
 * the rest of this file then read as any import of Triton. A relative import that is neither a
 * file nor Triton's stays, and is an error where a kernel uses its names. */
static void triton_relative_imports(Linker *lk, const char *path, Module *m)
{
    for (int i = 0; m && i < m->nglobals; i++) {
        Stmt *st = m->globals[i];
        if (!st || st->kind != ST_IMPORT)
            continue;
        const char *triton = triton_module_of_relative(lk, st);
        if (!triton)
            continue;
        StrBuf tried = {0};
        const char *from = st->import_.module;
        bool is_file = find_module(lk, path, from, &tried) != NULL;
        for (int k = 0; k < st->import_.n && !is_file; k++) {
            const char *sub = from[strlen(from) - 1] == '.'
                                  ? arena_printf(lk->a, "%s%s", from, st->import_.names[k])
                                  : arena_printf(lk->a, "%s.%s", from, st->import_.names[k]);
            is_file = find_module(lk, path, sub, &tried) != NULL;
        }
        strbuf_free(&tried);
        if (!is_file)
            st->import_.module = triton;
    }
}

/* Reads and parses a module once (by its real path; a cycle finds it loaded). */
static int load(Linker *lk, const char *path, const char *qual)
{
    char *resolved = realpath(path, NULL);
    const char *real = resolved ? arena_strdup(lk->a, resolved) : path;
    free(resolved);
    for (int i = 0; i < lk->nmods; i++)
        if (!strcmp(lk->mods[i].real, real))
            return i;
    /* Two modules with one qualified name (two utils.py): the second gets a number. */
    const char *unique = qual;
    for (int n = 2, clash = 1; clash; n++) {
        clash = 0;
        for (int i = 0; i < lk->nmods; i++)
            if (lk->mods[i].qual && !strcmp(lk->mods[i].qual, unique))
                clash = 1;
        if (clash)
            unique = arena_printf(lk->a, "%s#%d", qual, n);
    }
    size_t len = 0;
    char *text = read_whole(path, &len);
    SrcFile *file = arena_alloc(lk->a, sizeof *file);
    file->name = path;
    if (text) {
        file->text = arena_strndup(lk->a, text, len);
        file->len = len;
        free(text);
    }
    if (lk->key && file->text) {
        strbuf_printf(lk->key, "import %zu:%s %zu:", strlen(path), path, file->len);
        strbuf_append_n(lk->key, file->text, file->len);
        strbuf_putc(lk->key, '\n');
    }
    LoadedModule lm = {.path = path, .real = real, .qual = unique, .file = file};
    lm.m = file->text ? parse_imported_module(file, lk->env, lk->a, lk->diag) : NULL;
    triton_relative_imports(lk, path, lm.m);
    if (!file->text)
        diag_error(lk->diag, (SrcLoc){file, 0, 0}, "cannot read %s", path);
    ARENA_PUSH(lk->a, lk->mods, lk->nmods, lk->modcap, lm);
    return lk->nmods - 1;
}

/* ---- what a module's names are bound to ------------------------------------------------------ */

static const Stmt *module_assign(const Module *m, const char *name)
{
    const Stmt *found = NULL;
    for (int i = 0; m && i < m->nglobals; i++) {
        const Stmt *st = m->globals[i];
        if (!st || st->kind != ST_ASSIGN)
            continue;
        for (int k = 0; k < st->assign.ntargets; k++) {
            const Expr *t = st->assign.targets[k];
            if (t && t->kind == EX_NAME && t->str && !strcmp(t->str, name))
                found = st;
        }
    }
    return found;
}

static const FuncDef *module_def(const Module *m, const char *name)
{
    for (int i = 0; m && i < m->nfuncs; i++)
        if (m->funcs[i] && m->funcs[i]->name && !strcmp(m->funcs[i]->name, name))
            return m->funcs[i];
    return NULL;
}

static bool import_bind(Linker *lk, int mod, const char *name, ImportBind *out);

/* Whether module mod imports `name` (binds it by an import, not a def or assignment), and how. */
static bool reexport(Linker *lk, int mod, const char *name, ImportBind *out)
{
    if (lk->reexports >= 16) /* a cycle of re-exports: left as "not defined" */
        return false;
    lk->reexports++;
    bool found = import_bind(lk, mod, name, out) && out->kind != BIND_MISSING;
    lk->reexports--;
    return found;
}

/* The binding of dotted name `name` made by module mod's imports (the last one), resolving the
 * module it names; false when no import binds it. */
static bool import_bind(Linker *lk, int mod, const char *name, ImportBind *out)
{
    const Module *m = lk->mods[mod].m;
    bool found = false;
    for (int i = 0; m && i < m->nglobals; i++) {
        const Stmt *st = m->globals[i];
        if (!st || st->kind != ST_IMPORT)
            continue;
        for (int k = 0; k < st->import_.n; k++) {
            const char *imported = st->import_.names[k], *as = st->import_.asnames[k];
            const char *from = st->import_.module;
            const char *bound = as ? as : imported;
            if (!imported || !strcmp(imported, "*") || strcmp(bound, name))
                continue;
            const char *module_text = from ? from : imported;
            /* `import math`: Python's, which sema reads (constants, math.NAME on numbers) */
            if (is_triton_module(module_text) || (!from && !strcmp(imported, "math"))) {
                *out = (ImportBind){.name = name, .kind = BIND_TRITON, .loc = st->loc};
                found = true;
                continue;
            }
            StrBuf tried = {0};
            ImportBind b = {.name = name, .loc = st->loc, .module_text = module_text};
            if (!from) {
                b.kind = BIND_MODULE;
                b.mod = resolve(lk, mod, imported, &tried);
            } else {
                int pm = resolve(lk, mod, from, &tried);
                const Module *pmod = pm >= 0 ? lk->mods[pm].m : NULL;
                ImportBind again;
                if (pm >= 0 && (module_def(pmod, imported) || module_assign(pmod, imported))) {
                    b.kind = BIND_MEMBER;
                    b.mod = pm;
                    b.member = imported;
                } else if (pm >= 0 && reexport(lk, pm, imported, &again)) {
                    /* a package's __init__.py re-exporting what it imports (FlagGems'
                     * `from flag_gems.utils import tl_extra_shim`, which utils/__init__.py
                     * imports from .triton_lang_helper): bound as that module binds it */
                    again.name = name;
                    b = again;
                } else {
                    /* a submodule: `from . import utils`, `from pkg import kernels` */
                    const char *sub = from[strlen(from) - 1] == '.'
                                          ? arena_printf(lk->a, "%s%s", from, imported)
                                          : arena_printf(lk->a, "%s.%s", from, imported);
                    StrBuf more = {0};
                    b.kind = BIND_MODULE;
                    b.mod = resolve(lk, mod, sub, &more);
                    if (b.mod < 0 && pm >= 0) {
                        b.kind = BIND_MEMBER; /* not defined there: sema's "not defined" */
                        b.mod = pm;
                        b.member = imported;
                    } else if (b.mod < 0) {
                        strbuf_printf(&tried, ", %s", more.data ? more.data : "");
                    }
                    strbuf_free(&more);
                }
            }
            if (b.mod < 0 && from && !as && reexports_triton(imported)) {
                /* `from vllm.triton_utils import tl, triton`: a package that re-exports Triton's
                 * modules under their own names (every vLLM kernel file imports them so). Where
                 * that package is not at hand the names are Triton's, as they are at run time. */
                b.kind = BIND_TRITON;
            } else if (b.mod < 0) {
                b.kind = BIND_MISSING;
                b.tried = arena_strdup(lk->a, tried.data ? tried.data : "");
            }
            strbuf_free(&tried);
            *out = b;
            found = true;
        }
    }
    return found;
}

/* The module names sema knows without an import (sema.c is_module_name). */
static bool sema_knows_module_name(const char *name)
{
    static const char *const known[] = {"tl", "triton", "language", "math", "libdevice", "torch"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(name, known[i]))
            return true;
    return false;
}

/* ---- renaming ---------------------------------------------------------------------------------- */

/* The names a function assigns (its locals), which shadow the module's. */
typedef struct Locals {
    const char **names;
    int n, cap;
} Locals;

static void add_target(Linker *lk, Locals *l, const Expr *t)
{
    if (!t)
        return;
    if (t->kind == EX_NAME && t->str)
        ARENA_PUSH(lk->a, l->names, l->n, l->cap, t->str);
    else if (t->kind == EX_TUPLE || t->kind == EX_LIST)
        for (int i = 0; i < t->list.n; i++)
            add_target(lk, l, t->list.elts[i]);
}

static void collect_locals(Linker *lk, Locals *l, const Block *b, int depth)
{
    for (int i = 0; b && i < b->n && depth < 200; i++) {
        const Stmt *st = b->stmts[i];
        if (!st)
            continue;
        switch (st->kind) {
        case ST_ASSIGN:
            for (int k = 0; k < st->assign.ntargets; k++)
                add_target(lk, l, st->assign.targets[k]);
            break;
        case ST_AUGASSIGN: add_target(lk, l, st->aug.target); break;
        case ST_FOR:
            add_target(lk, l, st->for_.target);
            collect_locals(lk, l, &st->for_.body, depth + 1);
            break;
        case ST_WHILE: collect_locals(lk, l, &st->while_.body, depth + 1); break;
        case ST_IF:
            collect_locals(lk, l, &st->if_.then, depth + 1);
            collect_locals(lk, l, &st->if_.els, depth + 1);
            break;
        case ST_IMPORT:
            for (int k = 0; k < st->import_.n; k++) {
                const char *bound =
                    st->import_.asnames[k] ? st->import_.asnames[k] : st->import_.names[k];
                if (bound)
                    ARENA_PUSH(lk->a, l->names, l->n, l->cap, bound);
            }
            break;
        default: break;
        }
    }
}

static bool is_local(const Locals *l, const char *name)
{
    for (int i = 0; l && i < l->n; i++)
        if (!strcmp(l->names[i], name))
            return true;
    return false;
}

static const char *link_member(Linker *lk, int mod, const char *name, SrcLoc use);

/* "a.b.c" for a chain of attributes on a name; NULL for anything else. */
static const char *dotted_of(Linker *lk, const Expr *e, int depth)
{
    if (depth > 64)
        return NULL;
    if (e->kind == EX_NAME)
        return e->str;
    if (e->kind != EX_ATTR)
        return NULL;
    const char *obj = dotted_of(lk, e->attr.obj, depth + 1);
    return obj ? arena_printf(lk->a, "%s.%s", obj, e->attr.name) : NULL;
}

/* What name `name` of module mod stands for in the linked module: NULL when it stays as written
 * (a local, a builtin, Triton's, the root's own definitions), else the qualified name. A name
 * bound to a whole module resolves only with a member (`K.f`): *module_out is then set. */
static const char *rename_name(Linker *lk, int mod, const char *name, SrcLoc use, int *module_out)
{
    *module_out = -1;
    ImportBind b;
    bool own = module_def(lk->mods[mod].m, name) || module_assign(lk->mods[mod].m, name);
    if (!own && import_bind(lk, mod, name, &b)) {
        switch (b.kind) {
        case BIND_MEMBER: return link_member(lk, b.mod, b.member, use);
        case BIND_MODULE: *module_out = b.mod; return NULL;
        case BIND_MISSING:
            diag_error(lk->diag, use,
                       "'%s' is imported from module '%s' (line %d of %s), which was not found "
                       "(tried %s)%s",
                       name, b.module_text, b.loc.line, lk->mods[mod].path, b.tried,
                       b.module_text[0] == '.'
                           ? "; nor is it Triton's (a relative import stands for Triton's "
                             "package only with Triton's names: language, jit, autotune, "
                             "heuristics, Config, cdiv, ...)"
                           : "");
            return NULL;
        case BIND_TRITON:
            /* bound again under the module's prefix (link_triton_imports), unless sema knows
             * the name by default */
            if (mod == 0 || sema_knows_module_name(name))
                return NULL;
            return arena_printf(lk->a, "%s.%s", lk->mods[mod].qual, name);
        }
    }
    if (mod == 0 || !own)
        return NULL;
    return link_member(lk, mod, name, use);
}

static void rename_expr(Linker *lk, int mod, const Locals *l, Expr *e, int depth);

static void rename_exprs(Linker *lk, int mod, const Locals *l, Expr **es, int n, int depth)
{
    for (int i = 0; es && i < n; i++)
        rename_expr(lk, mod, l, es[i], depth + 1);
}

/* Renames, in place, the names of e that stand for another module's definitions. */
static void rename_expr(Linker *lk, int mod, const Locals *l, Expr *e, int depth)
{
    if (!e || depth > 1000)
        return;
    switch (e->kind) {
    case EX_NAME: {
        if (!e->str || is_local(l, e->str))
            return;
        int whole;
        const char *q = rename_name(lk, mod, e->str, e->loc, &whole);
        if (q)
            e->str = q;
        return;
    }
    case EX_ATTR: {
        /* K.f, pkg.kernels.f: a prefix bound to a module (the longest), then one member */
        const char *path = dotted_of(lk, e, 0);
        const char *dot = path ? strrchr(path, '.') : NULL;
        if (dot && !is_local(l, arena_strndup(lk->a, path, strcspn(path, ".")))) {
            char *prefix = arena_strndup(lk->a, path, (size_t)(dot - path));
            int target;
            const char *q = rename_name(lk, mod, prefix, e->loc, &target);
            if (target >= 0) {
                const char *member = dot + 1;
                e->kind = EX_NAME;
                e->str = link_member(lk, target, member, e->loc);
                return;
            }
            if (e->attr.obj->kind == EX_NAME) { /* looked up already: once is enough */
                if (q)
                    e->attr.obj->str = q;
                return;
            }
        }
        rename_expr(lk, mod, l, e->attr.obj, depth + 1);
        return;
    }
    case EX_CALL:
        rename_expr(lk, mod, l, e->call.fn, depth + 1);
        rename_exprs(lk, mod, l, e->call.args, e->call.nargs, depth);
        rename_exprs(lk, mod, l, e->call.kwargs, e->call.nkwargs, depth);
        return;
    case EX_SUBSCRIPT:
        rename_expr(lk, mod, l, e->sub.obj, depth + 1);
        rename_exprs(lk, mod, l, e->sub.idx, e->sub.nidx, depth);
        return;
    case EX_SLICE:
        rename_expr(lk, mod, l, e->slice.lo, depth + 1);
        rename_expr(lk, mod, l, e->slice.hi, depth + 1);
        rename_expr(lk, mod, l, e->slice.step, depth + 1);
        return;
    case EX_TUPLE:
    case EX_LIST: rename_exprs(lk, mod, l, e->list.elts, e->list.n, depth); return;
    case EX_DICT:
        rename_exprs(lk, mod, l, e->dict.keys, e->dict.n, depth);
        rename_exprs(lk, mod, l, e->dict.vals, e->dict.n, depth);
        return;
    case EX_BINARY:
        rename_expr(lk, mod, l, e->bin.lhs, depth + 1);
        rename_expr(lk, mod, l, e->bin.rhs, depth + 1);
        return;
    case EX_UNARY: rename_expr(lk, mod, l, e->un.operand, depth + 1); return;
    case EX_TERNARY:
        rename_expr(lk, mod, l, e->ternary.cond, depth + 1);
        rename_expr(lk, mod, l, e->ternary.then, depth + 1);
        rename_expr(lk, mod, l, e->ternary.els, depth + 1);
        return;
    case EX_COMP: { /* an autotune helper's: its variables shadow the module's names */
        Locals inner = {0};
        for (int i = 0; l && i < l->n; i++)
            ARENA_PUSH(lk->a, inner.names, inner.n, inner.cap, l->names[i]);
        for (int i = 0; i < e->comp.n; i++) {
            rename_expr(lk, mod, &inner, e->comp.iters[i], depth + 1);
            add_target(lk, &inner, e->comp.targets[i]);
        }
        rename_expr(lk, mod, &inner, e->comp.elt, depth + 1);
        return;
    }
    default: return; /* literals; a lambda's body reads its own parameters */
    }
}

static void rename_block(Linker *lk, int mod, const Locals *l, Block *b, int depth)
{
    for (int i = 0; b && i < b->n && depth < 200; i++) {
        Stmt *st = b->stmts[i];
        if (!st)
            continue;
        switch (st->kind) {
        case ST_EXPR: rename_expr(lk, mod, l, st->expr.value, 0); break;
        case ST_ASSIGN:
            rename_exprs(lk, mod, l, st->assign.targets, st->assign.ntargets, 0);
            rename_expr(lk, mod, l, st->assign.annotation, 0);
            rename_expr(lk, mod, l, st->assign.value, 0);
            break;
        case ST_AUGASSIGN:
            rename_expr(lk, mod, l, st->aug.target, 0);
            rename_expr(lk, mod, l, st->aug.value, 0);
            break;
        case ST_IF:
            rename_expr(lk, mod, l, st->if_.cond, 0);
            rename_block(lk, mod, l, &st->if_.then, depth + 1);
            rename_block(lk, mod, l, &st->if_.els, depth + 1);
            break;
        case ST_FOR:
            rename_expr(lk, mod, l, st->for_.iter, 0);
            rename_block(lk, mod, l, &st->for_.body, depth + 1);
            break;
        case ST_WHILE:
            rename_expr(lk, mod, l, st->while_.cond, 0);
            rename_block(lk, mod, l, &st->while_.body, depth + 1);
            break;
        case ST_RETURN: rename_expr(lk, mod, l, st->ret.value, 0); break;
        case ST_ASSERT:
            rename_expr(lk, mod, l, st->assert_.cond, 0);
            rename_expr(lk, mod, l, st->assert_.msg, 0);
            break;
        default: break;
        }
    }
}

/* Renames a function's body and parameter annotations and defaults in module mod's namespace. */
static void rename_func(Linker *lk, int mod, FuncDef *f)
{
    Locals l = {0};
    for (int i = 0; i < f->nparams; i++)
        ARENA_PUSH(lk->a, l.names, l.n, l.cap, f->params[i].name);
    collect_locals(lk, &l, &f->body, 0);
    for (int i = 0; i < f->nparams; i++) {
        rename_expr(lk, mod, NULL, f->params[i].annotation, 0);
        rename_expr(lk, mod, NULL, f->params[i].default_value, 0);
    }
    rename_block(lk, mod, &l, &f->body, 0);
}

/* ---- linking ---------------------------------------------------------------------------------- */

/* The qualified name of module mod's definition `name`, linking it into the root on first use
 * (a @jit function: a copy renamed and with its body renamed; a constant: its assignment). An
 * undefined name is left for sema's "not defined" (with the qualified name). */
static const char *link_member(Linker *lk, int mod, const char *name, SrcLoc use)
{
    if (mod == 0)
        return name; /* the root's own definition (an import cycle back to it) */
    for (int i = 0; i < lk->nlinked; i++)
        if (lk->linked[i].mod == mod && !strcmp(lk->linked[i].name, name))
            return lk->linked[i].qual;
    const char *qual = arena_printf(lk->a, "%s.%s", lk->mods[mod].qual, name);
    ARENA_PUSH(lk->a, lk->linked, lk->nlinked, lk->linkcap, ((Linked){mod, name, qual}));
    const Module *m = lk->mods[mod].m;
    if (!m)
        return qual; /* it did not parse: reported */
    const FuncDef *def = module_def(m, name);
    if (def) {
        FuncDef *f = ast_clone_func(lk->a, def);
        f->name = qual;
        ARENA_PUSH(lk->a, lk->root->funcs, lk->root->nfuncs, lk->fcap, f);
        rename_func(lk, mod, f);
        return qual;
    }
    const Stmt *as = module_assign(m, name);
    if (as) {
        Stmt *copy = ast_stmt(lk->a, ST_ASSIGN, as->loc);
        copy->assign.targets = arena_alloc(lk->a, sizeof(Expr *));
        copy->assign.targets[0] = ast_expr(lk->a, EX_NAME, as->loc);
        copy->assign.targets[0]->str = qual;
        copy->assign.ntargets = 1;
        copy->assign.annotation = ast_clone_expr(lk->a, as->assign.annotation);
        copy->assign.value = ast_clone_expr(lk->a, as->assign.value);
        rename_expr(lk, mod, NULL, copy->assign.annotation, 0);
        rename_expr(lk, mod, NULL, copy->assign.value, 0); /* its dependencies go first */
        ARENA_PUSH(lk->a, lk->globals, lk->nglobals, lk->gcap, copy);
        return qual;
    }
    (void)use;
    return qual;
}

/* A Triton import of an imported module (`from triton.language.extra import libdevice as ld`)
 * that its linked code reads under a name sema does not know by default: bound again under the
 * module's qualified prefix. Names sema knows (tl, triton, libdevice, ...) stay as written. */
static void link_triton_imports(Linker *lk)
{
    for (int mod = 1; mod < lk->nmods; mod++) {
        const Module *m = lk->mods[mod].m;
        for (int i = 0; m && i < m->nglobals; i++) {
            const Stmt *st = m->globals[i];
            if (!st || st->kind != ST_IMPORT)
                continue;
            const char *from = st->import_.module;
            for (int k = 0; k < st->import_.n; k++) {
                const char *imported = st->import_.names[k], *as = st->import_.asnames[k];
                if (!imported || !is_triton_module(from ? from : imported) || (!from && !as))
                    continue;
                Stmt *copy = ast_stmt(lk->a, ST_IMPORT, st->loc);
                copy->import_ = st->import_;
                copy->import_.n = 1;
                copy->import_.names = &st->import_.names[k];
                copy->import_.asnames = arena_alloc(lk->a, sizeof(char *));
                copy->import_.asnames[0] =
                    arena_printf(lk->a, "%s.%s", lk->mods[mod].qual, as ? as : imported);
                ARENA_PUSH(lk->a, lk->globals, lk->nglobals, lk->gcap, copy);
            }
        }
    }
}

static bool link_root(Linker *lk, const SrcFile *file, Module *root)
{
    lk->root = root;
    const char *path = file->name ? file->name : "<source>";
    char *resolved = realpath(path, NULL);
    LoadedModule top = {.path = path,
                        .real = arena_strdup(lk->a, resolved ? resolved : path),
                        .qual = "",
                        .m = root,
                        .file = file};
    free(resolved);
    ARENA_PUSH(lk->a, lk->mods, lk->nmods, lk->modcap, top);
    triton_relative_imports(lk, path, root);
    lk->fcap = root->nfuncs;
    int before = lk->diag->errors;
    int nroot = root->nfuncs;
    for (int i = 0; i < nroot; i++)
        if (root->funcs[i] && root->funcs[i]->is_jit)
            rename_func(lk, 0, root->funcs[i]);
    /* The root's module-level assignments are host code as often as constants (vLLM's `logger =
     * init_logger(__name__)`): a name imported from a module not at hand stays as written, and
     * sema, which reads a global only where a kernel uses it, reports it there. */
    Diag *loud = lk->diag;
    Diag quiet = {0};
    lk->diag = &quiet;
    for (int i = 0; i < root->nglobals; i++) {
        Stmt *st = root->globals[i];
        if (st && st->kind == ST_ASSIGN)
            rename_expr(lk, 0, NULL, st->assign.value, 0);
    }
    /* A kernel's decorators read imported names too (`from .tuning import get_configs`, then
     * @triton.autotune(configs=get_configs(), ...)): the helper is linked, for autotune.c. */
    for (int i = 0; i < nroot; i++)
        for (int d = 0; root->funcs[i] && root->funcs[i]->is_jit && d < root->funcs[i]->ndecorators;
             d++)
            rename_expr(lk, 0, NULL, root->funcs[i]->decorators[d], 0);
    lk->diag = loud;
    diag_free(&quiet);
    if (lk->nmods > 1)
        link_triton_imports(lk);
    if (lk->nglobals > 0) {
        Stmt **all = arena_alloc(lk->a, sizeof(Stmt *) * (size_t)(lk->nglobals + root->nglobals));
        memcpy(all, lk->globals, sizeof(Stmt *) * (size_t)lk->nglobals);
        if (root->nglobals)
            memcpy(all + lk->nglobals, root->globals, sizeof(Stmt *) * (size_t)root->nglobals);
        root->globals = all;
        root->nglobals += lk->nglobals;
    }
    return lk->diag->errors == before;
}

Module *driver_parse(const SrcFile *file, const CompileOptions *opt, Arena *arena, Diag *diag)
{
    HostEnv env = driver_host_env(opt ? &opt->spec.host_env : NULL);
    Module *m = parse_module(file, &env, arena, diag);
    if (!m || (opt && opt->parse_only))
        return m;
    Linker lk = {.a = arena, .diag = diag, .env = &env};
    if (opt) {
        lk.dirs = opt->include_dirs;
        lk.ndirs = opt->ninclude_dirs;
    }
    return link_root(&lk, file, m) ? m : NULL;
}

void driver_import_key(StrBuf *key, const SrcFile *file, const char *const *dirs, int ndirs,
                       const HostEnv *env)
{
    size_t n = file->name ? strlen(file->name) : 0;
    if (n > 4 && !strcmp(file->name + n - 4, ".tir"))
        return; /* tile IR imports nothing */
    Arena *a = arena_new();
    Diag quiet = {0};
    HostEnv host = driver_host_env(env);
    Module *m = parse_module(file, &host, a, &quiet);
    if (m) {
        Linker lk = {
            .a = a, .diag = &quiet, .dirs = dirs, .ndirs = ndirs, .key = key, .env = &host};
        link_root(&lk, file, m);
    }
    diag_free(&quiet);
    arena_free(a);
}
