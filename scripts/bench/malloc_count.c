/* Counts heap allocations of a process: loaded with LD_PRELOAD, it answers malloc and its kin by
 * glibc's own __libc_ entry points (so no dlsym, which itself allocates) and, at exit, writes the
 * number of allocations to the file named by MALLOC_COUNT_OUT. Allocation counts are
 * deterministic: scripts/bench/allocations.sh turns them into allocations per frame.
 *
 *   cc -shared -fPIC -O2 -o malloc_count.so scripts/bench/malloc_count.c
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations;

void *malloc(size_t n) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); return __libc_malloc(n); }
void *calloc(size_t n, size_t size) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); return __libc_calloc(n, size); }

/* A realloc that moves or creates a block is an allocation; one that shrinks or frees is not. */
void *realloc(void *p, size_t n) {
    if (p == NULL || n > 0) atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_realloc(p, n);
}

void *memalign(size_t alignment, size_t n) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); return __libc_memalign(alignment, n); }
void *aligned_alloc(size_t alignment, size_t n) { return memalign(alignment, n); }

int posix_memalign(void **out, size_t alignment, size_t n) {
    void *p = memalign(alignment, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report(void) {
    unsigned long count = atomic_load(&allocations);
    const char *path = getenv("MALLOC_COUNT_OUT");
    if (path == NULL) return;
    FILE *f = fopen(path, "w");
    if (f == NULL) return;
    fprintf(f, "%lu\n", count);
    fclose(f);
}
