/* arena.c: one bump allocator per compilation. Chunks grow geometrically; large requests get a
 * chunk of their own. */
#include "support/support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct Chunk {
    struct Chunk *next;
    size_t size, used;
    bool mapped; /* from mmap (malloc failed): munmap'd by arena_free */
    _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
    Chunk *head;
    size_t next_size;
    bool mapped;
};

/* ---- out of memory -------------------------------------------------------------------------- */

static _Thread_local unsigned long alloc_failures;
static long fail_countdown; /* the injection: the n-th allocation from now fails */

unsigned long support_alloc_failures(void) { return alloc_failures; }

void support_fail_allocation(long n) { __atomic_store_n(&fail_countdown, n, __ATOMIC_SEQ_CST); }

bool support_alloc_should_fail(void)
{
    long n = __atomic_load_n(&fail_countdown, __ATOMIC_RELAXED);
    return n > 0 && __atomic_sub_fetch(&fail_countdown, 1, __ATOMIC_SEQ_CST) == 0;
}

void support_note_alloc_failure(void) { alloc_failures++; }

/* n bytes from malloc, or (when that fails, counted) straight from the kernel. mapped says which. */
static void *arena_sys_alloc(size_t n, bool *mapped)
{
    *mapped = false;
    void *p = support_alloc_should_fail() ? NULL : malloc(n);
    if (p)
        return p;
    support_note_alloc_failure();
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        /* Neither malloc nor the kernel has n bytes: nothing can run on, not even a message
         * through the allocator. */
        fprintf(stderr, "tric: out of memory (%zu bytes)\n", n);
        abort();
    }
    *mapped = true;
    return p;
}

static void arena_sys_free(void *p, size_t n, bool mapped)
{
    if (mapped)
        munmap(p, n);
    else
        free(p);
}

Arena *arena_new(void)
{
    bool mapped;
    Arena *a = arena_sys_alloc(sizeof *a, &mapped);
    a->head = NULL;
    a->next_size = 64 * 1024;
    a->mapped = mapped;
    return a;
}

void arena_free(Arena *a)
{
    if (!a)
        return;
    for (Chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        arena_sys_free(c, sizeof *c + c->size, c->mapped);
    }
    arena_sys_free(a, sizeof *a, a->mapped);
}

void *arena_alloc(Arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    Chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t chunk_size = a->next_size;
        if (chunk_size < size)
            chunk_size = size;
        else if (a->next_size < (64u << 20))
            a->next_size *= 2;
        bool mapped;
        c = arena_sys_alloc(sizeof *c + chunk_size, &mapped);
        c->mapped = mapped;
        c->size = chunk_size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

void *arena_grow(Arena *a, void *old, size_t old_size, size_t new_size)
{
    void *p = arena_alloc(a, new_size);
    if (old && old_size)
        memcpy(p, old, old_size < new_size ? old_size : new_size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}
