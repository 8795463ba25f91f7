import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import Testing

@Suite("Backups", .enabled(if: TestDatabase.isSQLite))
struct BackupTests {
    /// A backup taken while writers keep writing is consistent: it opens, passes its integrity
    /// check, and holds a prefix of the writes, never a torn one.
    @Test func aBackupWhileWritingRestoresAndCompares() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        _ = try await t.store.replaceParks(try Parks.all.map(Parks.definition))
        let users = try await (0..<4).asyncMap { i in
            try await t.store.createUser(username: "rider\(i)", displayName: "Rider \(i)", passwordHash: "x", role: .member).id
        }
        let index = try FenceIndex(parks: try await t.store.allParks().map(\.park), zones: [], replicas: 1)
        let writers = Task {
            var written = 0
            for step in 0..<60 {
                for user in users {
                    let fix = IncomingFix(clientID: "s\(step)", lat: 41.4822, lon: -82.6835 + Double(step) * 1e-5, accuracy: 5,
                                          recordedAt: Date().addingTimeInterval(Double(step - 60)))
                    _ = try await t.store.recordFixes(user: user, [fix], source: .api, visitTimeout: CheckinPolicy().visitTimeout,
                                                      decide: { fix, state, now in FixPipeline().process(fix, state: &state, index: index, now: now) })
                    written += 1
                }
            }
            return written
        }
        try await Task.sleep(for: .milliseconds(50))
        let destination = t.directory.appendingPathComponent("backup/copy.sqlite").path
        let summary = try await t.store.backup(to: destination)
        let written = try await writers.value
        #expect(summary.bytes > 0)

        let restored = try SpatiaLiteStore(path: destination)
        defer { try? restored.close() }
        #expect(try await restored.integrityCheck() == ["ok"])
        let copied = try await restored.tableCounts()
        let live = try await t.store.tableCounts()
        #expect(copied["parks"] == 3 && copied["users"] == 4)
        #expect((copied["fixes"] ?? -1) <= written && live["fixes"] == written)
        // A snapshot: every user's copied fixes are that user's earliest ones, without gaps.
        for user in users {
            let n = try await restored.fixCount(of: user)
            #expect(n <= 60)
        }
        // Backing up the backup gives the same counts: nothing lost in a restore.
        let again = t.directory.appendingPathComponent("backup/again.sqlite").path
        _ = try await restored.backup(to: again)
        let twice = try SpatiaLiteStore(path: again)
        defer { try? twice.close() }
        #expect(try await twice.tableCounts() == copied)
    }

    /// A photo the server deletes after the snapshot has its row in the copy but no file left to
    /// copy: it is deleted from the copy too (and the profile that showed it shows none), not
    /// kept pointing at nothing; the others come with their files.
    @Test func aPhotoDeletedDuringTheBackupIsLeftOut() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let ann = try await t.store.createUser(username: "ann", displayName: "Ann", passwordHash: "x", role: .member).id
        let pictures = try ["coaster.png", "coaster-gps.jpg"].map { name in
            try ImageInspector.inspect([UInt8](try Data(contentsOf: Self.images.appendingPathComponent(name))))
        }
        var stored: [Photo] = []
        // The store names files by the address the API gives it (the bytes' SHA-256); any will do here.
        for (image, sha) in zip(pictures, ["a1" + String(repeating: "0", count: 62), "b2" + String(repeating: "0", count: 62)]) {
            stored.append(try await t.store.addPhoto(owner: ann, image: image, sha256: sha, caption: nil, park: nil, ride: nil))
        }
        try await t.store.setProfilePhoto(stored[0].id, owner: ann)
        // As if deleted by the server between the snapshot and the copying of its file.
        let gone = t.sqlite.photoURL(stored[0].sha256, stored[0].format)
        try FileManager.default.removeItem(at: gone)

        let destination = t.directory.appendingPathComponent("backup/copy.sqlite").path
        let summary = try await t.store.backup(to: destination)
        #expect(summary.photos == 1 && summary.photosLeftOut == 1)
        let restored = try SpatiaLiteStore(path: destination)
        defer { try? restored.close() }
        #expect(try await restored.integrityCheck() == ["ok"])
        #expect(try await restored.photo(stored[0].id, viewer: ann) == nil)
        let kept = try #require(try await restored.photo(stored[1].id, viewer: ann))
        #expect(try restored.photoBytes(kept) == Data(pictures[1].bytes))
        #expect(try await restored.profilePhotoID(of: ann) == nil)
    }

    static let images = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CoasterAPITests/Data")
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}
