import CoasterStore
import Foundation

/// A loaded benchmark world kept on disk (`coasterbench load --keep`), one a size and seed: the
/// SpatiaLite file as the load closed it, its tokens and askers, and a `key` file naming what
/// loaded it, written last, so that a keep cut short is never used.
struct KeptWorld {
    let directory: URL

    init(directory: URL, world: WorldOptions) {
        self.directory = directory.appendingPathComponent("\(world.users)-users-seed-\(world.seed)")
    }

    /// What must have loaded a kept world for this build to use it: the generator and the schema.
    static let key = ["generator \(Workload.version)", "schema \(SpatiaLiteStore.schemaVersion)"]

    private func file(_ name: String) -> URL { self.directory.appendingPathComponent(name) }

    /// When the kept world was loaded, if there is one this build may use; says why not when one
    /// was loaded by another generator or schema.
    func loadedAt() -> Date? {
        guard let text = try? String(contentsOf: self.file("key"), encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count == Self.key.count + 1, Array(lines.prefix(Self.key.count)) == Self.key,
              let seconds = lines.last.flatMap({ $0.hasPrefix("loaded ") ? Double($0.dropFirst(7)) : nil })
        else {
            print("the world kept in \(self.directory.path) was loaded by \(lines.dropLast().joined(separator: ", ")), not \(Self.key.joined(separator: ", ")): loading it again")
            return nil
        }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Copies the kept world to `database` (its tokens and askers beside), and moves its times
    /// from when it was loaded to now. On failure nothing of it is left at `database` and the kept
    /// world is dropped: the caller loads the world instead.
    func use(database: String, tokens: String, askers: String?, loadedAt: Date) async throws {
        do {
            try await self.copy(to: database, tokens: tokens, askers: askers, loadedAt: loadedAt)
        } catch {
            for path in [database, database + "-wal", database + "-shm", tokens] + (askers.map { [$0] } ?? []) {
                try? FileManager.default.removeItem(atPath: path)
            }
            try? FileManager.default.removeItem(at: self.directory)
            throw error
        }
    }

    private func copy(to database: String, tokens: String, askers: String?, loadedAt: Date) async throws {
        let start = Date()
        let fm = FileManager.default
        let bytes = (try? fm.attributesOfItem(atPath: self.file("world.sqlite").path)[.size] as? Int) ?? 0
        print("using the world kept in \(self.directory.path), loaded \(loadedAt.formatted(.iso8601)): copying \(bytes / 1_048_576) MiB")
        try fm.copyItem(at: self.file("world.sqlite"), to: URL(fileURLWithPath: database))
        if fm.fileExists(atPath: self.file("world.sqlite-wal").path) {
            try fm.copyItem(at: self.file("world.sqlite-wal"), to: URL(fileURLWithPath: database + "-wal"))
        }
        try Self.replace(URL(fileURLWithPath: tokens), with: self.file("tokens"))
        if let askers { try Self.replace(URL(fileURLWithPath: askers), with: self.file("askers")) }
        let shift = start.timeIntervalSince(loadedAt)
        print("copied in \(String(format: "%.1f", Date().timeIntervalSince(start))) s; moving its times \(Int(shift)) s on")
        let store = try SpatiaLiteStore(path: database)
        defer { try? store.close() }
        try await store.bulkShiftTimes(by: shift) { print($0) }
        print("the kept world is ready in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }

    /// Copies `source` to `destination`, replacing what is there.
    private static func replace(_ destination: URL, with source: URL) throws {
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.copyItem(at: source, to: destination)
    }

    /// Keeps the world just loaded into `database` (closed) with its tokens and askers, replacing
    /// any kept before. A world that cannot be kept (a full disk) is still loaded: this says why
    /// and leaves nothing half-kept.
    func keep(database: String, tokens: String, askers: String, loadedAt: Date) {
        let partial = self.directory.appendingPathExtension("partial")
        do {
            try self.write(partial, database: database, tokens: tokens, askers: askers, loadedAt: loadedAt)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            print("could not keep the world in \(self.directory.path): \(error)")
        }
    }

    private func write(_ partial: URL, database: String, tokens: String, askers: String, loadedAt: Date) throws {
        let start = Date()
        let fm = FileManager.default
        try? fm.removeItem(at: partial)
        try fm.createDirectory(at: partial, withIntermediateDirectories: true)
        try fm.copyItem(at: URL(fileURLWithPath: database), to: partial.appendingPathComponent("world.sqlite"))
        // Closing the store may leave its log beside the file, holding commits the file lacks.
        if fm.fileExists(atPath: database + "-wal") {
            try fm.copyItem(at: URL(fileURLWithPath: database + "-wal"), to: partial.appendingPathComponent("world.sqlite-wal"))
        }
        try fm.copyItem(at: URL(fileURLWithPath: tokens), to: partial.appendingPathComponent("tokens"))
        try fm.copyItem(at: URL(fileURLWithPath: askers), to: partial.appendingPathComponent("askers"))
        try (Self.key + ["loaded \(loadedAt.timeIntervalSince1970)"]).joined(separator: "\n")
            .write(to: partial.appendingPathComponent("key"), atomically: true, encoding: .utf8)
        try? fm.removeItem(at: self.directory)
        try fm.moveItem(at: partial, to: self.directory)
        print("kept the world in \(self.directory.path) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }
}
