import CoasterCore
import Foundation
import Synchronization

/// An uploaded park file, read by exactly the validation of `coasterlife import` and
/// `PUT /v1/admin/parks/{parkId}`, and nothing written: what the admin preview draws.
struct ParkPreview {
    /// The file's text when it is JSON (the map draws its features, problems and all); `nil`
    /// when it is not, and then the page says so instead.
    let document: String?
    /// What is wrong with it, each with its feature, pointer and place on the ground.
    let issues: [ImportIssue]
    /// Members ignored in a valid file.
    let warnings: [ImportIssue]
    /// The park, when the file is valid.
    let park: Park?

    init(_ data: Data, filename: String?) {
        do {
            let json = try JSONValue.strict(data)
            self.document = String(decoding: data, as: UTF8.self)
            do {
                let read = try ParkImporter().read(json)
                (self.issues, self.warnings, self.park) = ([], read.warnings, read.definition.park)
            } catch {
                (self.issues, self.warnings, self.park) = (error.issues, [], nil)
            }
        } catch {
            // The importer's own words for why it is not JSON.
            self.document = nil
            self.issues = Self.notJSON(data)
            self.warnings = []
            self.park = nil
        }
    }

    private static func notJSON(_ data: Data) -> [ImportIssue] {
        do {
            _ = try ParkImporter().read(data)
            return [ImportIssue(feature: nil, pointer: "", reason: "not valid JSON")]
        } catch {
            return error.issues
        }
    }
}

/// Valid uploads waiting for their admin's "load", kept in memory for ``lifetime``: the load
/// writes the very file that was previewed, without sending 16 MB back through the browser.
/// Bounded: one preview per admin, at most ``capacity`` in all (the oldest goes first).
final class ParkPreviews: Sendable {
    static let lifetime: TimeInterval = 15 * 60
    static let capacity = 8

    private struct Kept {
        var user: UserID
        var token: String
        var data: Data
        var at: Date
    }

    private let kept = Mutex<[Kept]>([])
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// Keeps `data` for `user` (replacing their earlier preview) and returns its token.
    func keep(_ data: Data, for user: UserID) -> String {
        let token = MapSession.newLoginToken()
        let now = self.now()
        self.kept.withLock { kept in
            kept.removeAll { $0.user == user || now.timeIntervalSince($0.at) > Self.lifetime }
            if kept.count >= Self.capacity { kept.removeFirst(kept.count - Self.capacity + 1) }
            kept.append(Kept(user: user, token: token, data: data, at: now))
        }
        return token
    }

    /// The file kept under `token` for `user`, removed: a preview loads once.
    func take(_ token: String, for user: UserID) -> Data? {
        let now = self.now()
        return self.kept.withLock { kept in
            guard let i = kept.firstIndex(where: { $0.user == user && MapSession.constantTimeEqual($0.token, token) }) else { return nil }
            let found = kept.remove(at: i)
            return now.timeIntervalSince(found.at) <= Self.lifetime ? found.data : nil
        }
    }
}
