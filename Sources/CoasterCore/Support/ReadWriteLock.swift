import CMemory
#if canImport(Glibc)
import Glibc
#endif

/// A value that many threads may read at once and one at a time may change: a POSIX
/// reader-writer lock in which a waiting writer goes before new readers.
///
/// For the live directory, which every nearby query reads for a few microseconds and fix batches
/// change: behind a mutex, two event loops' queries waited for each other (the waiter spinning,
/// then asleep in the kernel), although neither changes anything.
public final class ReadWriteLock<Value>: @unchecked Sendable {
    // Unchecked: the value is only reached through `read` (shared) and `write` (exclusive).
    @usableFromInline let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    @usableFromInline let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    public init(_ value: Value) {
        self.lock.initialize(to: pthread_rwlock_t())
        let status = cmemory_rwlock_init(self.lock)
        precondition(status == 0, "pthread_rwlock_init failed: \(status)")
        self.value.initialize(to: value)
    }

    deinit {
        pthread_rwlock_destroy(self.lock)
        self.lock.deallocate()
        self.value.deinitialize(count: 1)
        self.value.deallocate()
    }

    /// `body`'s answer from the value, while other readers may read it too and nobody changes it.
    /// Inlinable, so that callers in other modules get it specialised: unspecialised, the value
    /// reached `body` as a copy (a reference count on each of its parts, each read).
    @inlinable
    public func read<R>(_ body: (borrowing Value) throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(self.lock)
        defer { pthread_rwlock_unlock(self.lock) }
        return try body(self.value.pointee)
    }

    /// `body`'s answer after changing the value, while nobody else reads or changes it.
    @inlinable
    public func write<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(self.lock)
        defer { pthread_rwlock_unlock(self.lock) }
        return try body(&self.value.pointee)
    }
}
