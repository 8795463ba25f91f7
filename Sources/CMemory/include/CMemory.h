#ifndef COASTERLIFE_CMEMORY_H
#define COASTERLIFE_CMEMORY_H

// Memory hints Swift has no spelling for.

/// Asks the processor to start loading the cache line holding `address`, for reading, and to keep
/// it close. Unlike a load it does not hold the instructions behind it until the line arrives, so
/// a loop can have many lines on their way at once.
static inline void cmemory_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
