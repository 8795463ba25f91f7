import CoasterCore
import Foundation

/// Photo files on disk, as both stores keep them: content-addressed by the bytes' SHA-256, in a
/// directory per first two hexadecimal digits, each written atomically.
enum PhotoFiles {
    /// Where the file of `sha256` in `format` lives under a photo directory (a store's, or a
    /// backup's): `ab/<sha256>.jpg`, in the directory of its first two hexadecimal digits.
    static func url(_ sha256: String, _ format: InspectedImage.Format, under root: URL) -> URL {
        root.appendingPathComponent(String(sha256.prefix(2)), isDirectory: true).appendingPathComponent(Self.name(sha256, format))
    }

    /// A photo file's name: its bytes' SHA-256 and its format's extension.
    static func name(_ sha256: String, _ format: InspectedImage.Format) -> String {
        "\(sha256).\(format.fileExtension)"
    }

    /// How a photo file being written is named until it is complete.
    static let uploadPrefix = ".upload-"

    /// Writes `bytes` to `url` unless a file is there already (same content, same name): a temp
    /// file, fsync, rename, fsync of the directory.
    /// - Returns: whether a new file was written.
    static func writeAtomically(_ bytes: [UInt8], to url: URL) throws -> Bool {
        let fm = FileManager.default
        if fm.fileExists(atPath: url.path) { return false }
        let dir = url.deletingLastPathComponent()
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        let temp = dir.appendingPathComponent("\(Self.uploadPrefix)\(UUID().uuidString)")
        guard fm.createFile(atPath: temp.path, contents: nil), let handle = FileHandle(forWritingAtPath: temp.path) else {
            throw CocoaError(.fileWriteUnknown)
        }
        do {
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
            try handle.close()
            guard rename(temp.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        } catch {
            try? handle.close()
            try? fm.removeItem(at: temp)
            throw error
        }
        // The rename is durable only once the directory entry is.
        if let directory = FileHandle(forReadingAtPath: dir.path) {
            try? directory.synchronize()
            try? directory.close()
        }
        return true
    }

    /// A file under a photo directory that no row uses.
    struct Stray {
        var url: URL
        /// The SHA-256 its name carries; `nil` for an upload a crash left half-written.
        var sha256: String?
    }

    /// The files under `root` that are not in `kept` (names as ``name(_:_:)`` gives them): photo
    /// files and half-written uploads. Anything else found there is not ours and is left out.
    static func strays(under root: URL, keeping kept: Set<String>) throws -> [Stray] {
        let fm = FileManager.default
        guard fm.fileExists(atPath: root.path) else { return [] }
        var strays: [Stray] = []
        for shard in try fm.contentsOfDirectory(atPath: root.path) {
            let directory = root.appendingPathComponent(shard, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            for name in try fm.contentsOfDirectory(atPath: directory.path) where !kept.contains(name) {
                let url = directory.appendingPathComponent(name)
                if name.hasPrefix(Self.uploadPrefix) {
                    strays.append(Stray(url: url, sha256: nil))
                } else if Self.isPhotoFileName(name, shard: shard) {
                    strays.append(Stray(url: url, sha256: String(name.prefix { $0 != "." })))
                }
            }
        }
        return strays
    }

    /// Whether `name` is how the stores name a photo file in `shard` (64 hex digits, the first two
    /// the shard's, and a known extension).
    static func isPhotoFileName(_ name: String, shard: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 64, parts[0].hasPrefix(shard),
              parts[0].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
              InspectedImage.Format.allCases.contains(where: { $0.fileExtension == parts[1] }) else { return false }
        return true
    }
}
