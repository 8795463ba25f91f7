import CoasterCore
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Each side runs on a thread of its own: on Dispatch's shared pool a side could wait seconds for a
/// worker while other tests hold them, and the readers' wait for each other would run out.
@Suite("Read-write lock")
struct ReadWriteLockTests {
    /// Runs `work` on a new thread, in `group`.
    static func spawn(_ group: DispatchGroup, _ work: @escaping @Sendable () -> Void) {
        group.enter()
        Thread { work(); group.leave() }.start()
    }

    /// Two readers are inside at once: the first waits, inside, for the second to come in, which
    /// a mutex would never let it do (the wait would run out).
    @Test func readersShareIt() {
        let lock = ReadWriteLock(0)
        let firstIn = DispatchSemaphore(value: 0), secondIn = DispatchSemaphore(value: 0)
        let met = ReadWriteLock(false)
        let group = DispatchGroup()
        Self.spawn(group) {
            lock.read { _ in
                firstIn.signal()
                let arrived = secondIn.wait(timeout: .now() + 10) == .success
                met.write { $0 = arrived }
            }
        }
        Self.spawn(group) {
            firstIn.wait()
            lock.read { _ in secondIn.signal() }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(met.read { $0 })
    }

    /// Writers change a pair one half at a time; readers never see the halves apart, and no write
    /// is lost. Each side runs on its own thread, all at once.
    @Test func writersHaveItAlone() {
        struct Pair { var a = 0, b = 0 }
        let lock = ReadWriteLock(Pair())
        let torn = ReadWriteLock(0)
        let group = DispatchGroup()
        for worker in 0..<4 {
            Self.spawn(group) {
                for i in 0..<4_000 {
                    if worker % 2 == 0 {
                        lock.write { pair in
                            pair.a += 1
                            // A moment between the halves, long enough for a reader on the other core.
                            if i % 16 == 0 { usleep(1) }
                            pair.b += 1
                        }
                    } else if lock.read({ $0.a != $0.b }) {
                        torn.write { $0 += 1 }
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(torn.read { $0 } == 0)
        #expect(lock.read { $0.a == 8_000 && $0.b == 8_000 })
    }
}
