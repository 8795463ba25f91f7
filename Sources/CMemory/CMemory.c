// Most of the module's functions are inline, in include/CMemory.h. The lock's set-up is here: it
// needs glibc's extensions, declared only when _GNU_SOURCE comes before any system header.
#define _GNU_SOURCE
#include <pthread.h>
#include "CMemory.h"

int cmemory_rwlock_init(pthread_rwlock_t *lock) {
    pthread_rwlockattr_t attributes;
    int status = pthread_rwlockattr_init(&attributes);
    if (status != 0) return status;
    // glibc lets new readers past a waiting writer by default: readers that keep overlapping
    // would keep it out for good.
    status = pthread_rwlockattr_setkind_np(&attributes, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    if (status == 0) status = pthread_rwlock_init(lock, &attributes);
    pthread_rwlockattr_destroy(&attributes);
    return status;
}
