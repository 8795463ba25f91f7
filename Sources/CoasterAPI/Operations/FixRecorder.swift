import CoasterCore
import CoasterHTTP
import CoasterStore
import Foundation
import HTTPTypes
import NIOCore

/// Records a user's fixes, and once they are committed brings the rest of the service up to date:
/// the fix metrics, the live directory (nearby answers read it) and friends' live feeds. Shared by
/// `POST /v1/fixes` (the router's handler and the fast lane's) and OwnTracks.
struct FixRecorder: Sendable {
    let store: Store
    let fences: Fences
    let people: People
    let live: Live
    let metrics: ServiceMetrics
    let policy: LocationPolicy

    /// The largest body `POST /v1/fixes` reads.
    static let bodyLimit = 1 << 20

    /// The fixes of a `POST /v1/fixes` body: one JSON object or an array of them, checked against
    /// the batch rules. Throws the problem the client gets.
    static func fixes(in body: ByteBuffer, policy: LocationPolicy) throws -> [IncomingFix] {
        // The plain shape read from the bytes; anything else left to the decoder (see FixBody).
        let fixes = try body.withUnsafeReadableBytes(FixBody.fixes) ?? FixWire.fixes(decoding: Data(body.readableBytesView))
        guard !fixes.isEmpty else { throw Problem.invalidField("", "the batch is empty") }
        guard fixes.count <= policy.maximumBatch else {
            throw Problem(.payloadTooLarge, status: .contentTooLarge, title: "Batch too large",
                          detail: "At most \(policy.maximumBatch) fixes a request; this one has \(fixes.count).")
        }
        for (i, fix) in fixes.enumerated() where (fix.clientID?.utf8.count ?? 0) > 64 {
            throw Problem.invalidField("/\(i)/id", "a client fix id has at most 64 bytes")
        }
        return fixes
    }

    /// Records `fixes` for `user` (whom the directory must hold: see the async form) and calls
    /// `completion` once they are committed and applied, on the store's writer thread. Applied
    /// there, batches reach the directory in the order they were committed, whoever waits for them.
    func record(_ fixes: [IncomingFix], for user: UserID, source: FixSource,
                completion: @escaping @Sendable (Result<FixBatch, any Error>) -> Void) {
        let start = ContinuousClock.now
        self.store.recordFixes(user: user, fixes, source: source, pipeline: FixPipeline(policy: self.policy.fixes),
                               checkins: self.policy.checkins, index: self.fences.index) { [metrics, people, live] result in
            if case .success(let batch) = result {
                metrics.fixes(batch, source: source.rawValue, writeDuration: ContinuousClock.now - start)
                people.apply(user, batch)
                live.fixesRecorded(by: user, batch)
            }
            completion(result)
        }
    }

    /// The same for a task: loads `user` into the directory first if it does not hold them yet
    /// (created by the command line, or by another process, since it was loaded).
    func record(_ fixes: [IncomingFix], for user: UserID, source: FixSource) async throws -> FixBatch {
        _ = try await self.people.person(loading: user)
        return try await withCheckedThrowingContinuation { continuation in
            self.record(fixes, for: user, source: source) { continuation.resume(with: $0) }
        }
    }
}
