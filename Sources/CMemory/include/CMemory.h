#ifndef COASTERLIFE_CMEMORY_H
#define COASTERLIFE_CMEMORY_H

// Memory hints and a lock Swift has no spelling for.

#include <pthread.h>

/// Asks the processor to start loading the cache line holding `address`, for reading, and to keep
/// it close. Unlike a load it does not hold the instructions behind it until the line arrives, so
/// a loop can have many lines on their way at once.
static inline void cmemory_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Initialises `lock` as a reader-writer lock that lets a waiting writer in before new readers.
/// 0, or the error number.
int cmemory_rwlock_init(pthread_rwlock_t *lock);

#endif
