import CoasterCore
import Foundation
import PostgresNIO

/// Photos and their files, in ``PostgresStore/photoDirectory`` (a configured directory: a database
/// URL has no file to put them beside).
///
/// Files are content-addressed, so one file can serve several rows. SQLite let the SpatiaLite
/// store hold its single writer while it removed a file no row used; here that writer is the
/// photo-file lock of the file's SHA-256 (``lockPhotoFile(_:_:)``): every insert of a photo row
/// holds it, and a file is removed only by a transaction that holds it and has read that no row
/// uses the bytes. Either an insert's row committed first, and the remover sees it and keeps the
/// file; or the remover goes first, and the insert, which checks for its file holding the lock,
/// writes it again. A row never commits without its file.
extension PostgresStore: PhotoStore {
    func photoURL(_ sha256: String, _ format: InspectedImage.Format) -> URL {
        PhotoFiles.url(sha256, format, under: self.photoDirectory)
    }

    /// Takes the photo-file lock of `sha256` until the transaction ends.
    ///
    /// The key is the two-part advisory key (2, `hashtext(sha256)`): PostgreSQL keeps two-part
    /// keys apart from the one-part keys of users and of ``PostgresLock``, so none of those can
    /// collide with it, and 2 keeps a space of its own should other two-part keys come. Two
    /// SHA-256s with the same `hashtext` share a lock: they only wait for each other.
    static func lockPhotoFile(_ sha256: String, _ tx: PostgresTransaction) async throws {
        try await tx.run("SELECT pg_advisory_xact_lock(2, hashtext(\(sha256)))")
    }

    /// Stores a cleaned image: the file first (atomically: temp file, fsync, rename, fsync of the
    /// directory), then the row; a failed row leaves no new file behind.
    ///
    /// The file is written before the transaction (its fsync would hold the owner's lock and a
    /// connection), so a delete of the last other row with the same bytes may remove it in
    /// between; the insert's transaction therefore takes the photo-file lock, inserts, and writes
    /// the file again if it is gone, and a row never commits without its file.
    public func addPhoto(owner: UserID, image: InspectedImage, sha256: String, caption: String?, park: ParkID?, ride: RideID?) async throws -> Photo {
        let url = self.photoURL(sha256, image.format)
        let created = try PhotoFiles.writeAtomically(image.bytes, to: url)
        let now = self.now()
        do {
            return try await self.transaction(locking: [owner]) { tx in
                var tagPark = park
                if let ride {
                    guard let ridePark = try await tx.first("SELECT park_id FROM rides WHERE id = \(ride.rawValue)")?.decode(String.self) else {
                        throw PhotoError.tagNotVisited(ride.rawValue)
                    }
                    tagPark = tagPark ?? ParkID(rawValue: ridePark)
                    guard tagPark?.rawValue == ridePark else { throw PhotoError.tagNotVisited(ride.rawValue) }
                }
                if let tagPark, try await tx.one("""
                    SELECT EXISTS (SELECT 1 FROM visits WHERE user_id = \(owner.rawValue) AND park_id = \(tagPark.rawValue))
                    """).decode(Bool.self) != true {
                    throw PhotoError.tagNotVisited(tagPark.rawValue)
                }
                try await Self.lockPhotoFile(sha256, tx)
                let id = try await tx.one("""
                    INSERT INTO photos (user_id, sha256, format, bytes, width, height, caption, park_id, ride_id, created_at)
                    VALUES (\(owner.rawValue), \(sha256), \(image.format.rawValue), \(image.bytes.count), \(image.width), \(image.height),
                            \(caption), \(tagPark?.rawValue), \(ride?.rawValue), \(now.timeIntervalSince1970))
                    RETURNING id
                    """).decode(Int64.self)
                _ = try PhotoFiles.writeAtomically(image.bytes, to: url)
                return Photo(id: id, owner: owner, sha256: sha256, format: image.format, bytes: image.bytes.count,
                             width: image.width, height: image.height, caption: caption, park: tagPark, ride: ride, createdAt: now)
            }
        } catch {
            if created { try? await self.removePhotoFileIfUnused(sha256, image.format) }
            throw error
        }
    }

    /// Removes the file of `sha256` unless a row uses it, holding its photo-file lock. Call it
    /// after the delete that made it unused has committed (a failed commit keeps the row, which
    /// needs its file): an insert of the same bytes then either committed before, and its row
    /// keeps the file, or commits after, and writes the file again.
    func removePhotoFileIfUnused(_ sha256: String, _ format: InspectedImage.Format) async throws {
        let url = self.photoURL(sha256, format)
        try await self.transaction { tx in
            try await Self.lockPhotoFile(sha256, tx)
            // A statement of its own, after the lock: its snapshot sees every insert that held it.
            guard try await tx.one("SELECT EXISTS (SELECT 1 FROM photos WHERE sha256 = \(sha256))").decode(Bool.self) == false else { return }
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// Removes the photo files no row uses, and uploads a crash left half-written. For a server
    /// starting on the store, before it takes requests: an upload in flight writes its file
    /// before its row (``addPhoto(owner:image:sha256:caption:park:ride:)``).
    ///
    /// Other nodes may be serving meanwhile: the files found unused are removed holding their
    /// photo-file locks, after reading again that no row uses them. (A half-written upload of
    /// another node is still removed, and that upload fails: start nodes one at a time.)
    public func sweepPhotoFiles() async throws -> PhotoSweep {
        let root = self.photoDirectory
        guard FileManager.default.fileExists(atPath: root.path) else { return PhotoSweep() }
        return try await self.transaction { tx in
            var kept = Set<String>()
            for row in try await tx.rows("SELECT DISTINCT sha256, format FROM photos") {
                let (sha256, format) = try row.decode((String, String).self)
                guard let format = InspectedImage.Format(rawValue: format) else { continue }
                kept.insert(PhotoFiles.name(sha256, format))
            }
            let strays = try PhotoFiles.strays(under: root, keeping: kept)
            let unused = Array(Set(strays.compactMap(\.sha256))).sorted()
            var used = Set<String>()
            if !unused.isEmpty {
                // Locks in one order (any two sweeps agree), then, in a statement of its own,
                // which of the files a row has come to use since.
                try await tx.run("""
                    SELECT pg_advisory_xact_lock(2, h) FROM (SELECT DISTINCT hashtext(s) AS h FROM unnest(\(unused)::text[]) s ORDER BY h) k
                    """)
                for row in try await tx.rows("SELECT DISTINCT sha256, format FROM photos WHERE sha256 = ANY(\(unused)::text[])") {
                    let (sha256, format) = try row.decode((String, String).self)
                    guard let format = InspectedImage.Format(rawValue: format) else { continue }
                    used.insert(PhotoFiles.name(sha256, format))
                }
            }
            var sweep = PhotoSweep()
            for stray in strays where !used.contains(stray.url.lastPathComponent) {
                if stray.sha256 == nil { sweep.partial += 1 } else { sweep.unused += 1 }
                try? FileManager.default.removeItem(at: stray.url)
            }
            return sweep
        }
    }

    /// A photo `viewer` may see (theirs, an accepted friend's, the proof of an entry in a
    /// challenge they may see, the cover of a list they may read, in a post they may read, or the
    /// profile photo of a findable user), or `nil`: no such photo and a photo they may not see
    /// are one answer. One snapshot for the photo and what lets the viewer see it.
    public func photo(_ id: Int64, viewer: UserID) async throws -> Photo? {
        try await self.read { tx in
            guard let photo = try await tx.first("SELECT \(unescaped: Self.photoColumns) FROM photos WHERE id = \(id)").map(Self.photo)
            else { return nil }
            if try await Self.isSelfOrFriend(photo.owner, of: viewer, tx) { return photo }
            return try await Self.isShownWithSomethingVisible(id, viewer: viewer, tx) ? photo : nil
        }
    }

    /// Whether a photo is the proof of an entry in a challenge the viewer may see (public, or
    /// they are a member or invited), the cover of a list they may read, in a post they may read,
    /// or the profile photo of a findable user not blocked either way (people search shows it):
    /// what shows it to them, so its bytes must load.
    private static func isShownWithSomethingVisible(_ id: Int64, viewer: UserID, _ tx: PostgresTransaction) async throws -> Bool {
        try await tx.one("""
            SELECT EXISTS (
                SELECT 1 FROM challenge_entries e JOIN challenges c ON c.id = e.challenge_id
                WHERE e.photo_id = \(id) AND (c.visibility = 'public' OR EXISTS (
                    SELECT 1 FROM challenge_members m
                    WHERE m.challenge_id = c.id AND m.user_id = \(viewer.rawValue) AND m.state IN ('member', 'invited'))))
            OR EXISTS (
                SELECT 1 FROM lists l, (SELECT \(viewer.rawValue)::bigint AS id) v
                WHERE l.cover_photo_id = \(id) AND \(unescaped: Self.readable("l", viewer: "v.id")))
            OR EXISTS (
                SELECT 1 FROM post_photos pp JOIN posts p ON p.id = pp.post_id, (SELECT \(viewer.rawValue)::bigint AS id) v
                WHERE pp.photo_id = \(id) AND \(unescaped: Self.postReadable("p", viewer: "v.id")))
            OR EXISTS (
                SELECT 1 FROM users u WHERE u.photo_id = \(id) AND u.findable
                AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(viewer.rawValue) AND b.blocked = u.id)
                AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = u.id AND b.blocked = \(viewer.rawValue)))
            """).decode(Bool.self)
    }

    /// The bytes of a stored photo.
    public func photoBytes(_ photo: Photo) throws -> Data {
        try Data(contentsOf: self.photoURL(photo.sha256, photo.format))
    }

    /// A user's photos, newest first; `before` pages by photo id. `nil` unless `viewer` is the
    /// user or an accepted friend of theirs (read in the same snapshot).
    public func photos(of user: UserID, viewer: UserID, limit: Int, before: Int64?) async throws -> [Photo]? {
        let before = before ?? Int64.max
        return try await self.read { tx in
            guard try await Self.isSelfOrFriend(user, of: viewer, tx) else { return nil }
            return try await tx.rows("""
                SELECT \(unescaped: Self.photoColumns) FROM photos WHERE user_id = \(user.rawValue) AND id < \(before) ORDER BY id DESC LIMIT \(limit)
                """).map(Self.photo)
        }
    }

    /// Deletes a photo the owner owns; its file goes when no other row uses the same bytes, after
    /// the delete has committed. The owner's lock keeps ``setProfilePhoto(_:owner:)`` from
    /// choosing the photo as it goes.
    public func deletePhoto(_ id: Int64, owner: UserID) async throws {
        let deleted = try await self.transaction(locking: [owner]) { tx in
            try await tx.first("""
                DELETE FROM photos WHERE id = \(id) AND user_id = \(owner.rawValue) RETURNING \(unescaped: Self.photoColumns)
                """).map(Self.photo)
        }
        guard let photo = deleted else { throw PhotoError.noSuchPhoto }
        try await self.removePhotoFileIfUnused(photo.sha256, photo.format)
    }

    /// Sets (or clears) the profile picture, which must be the user's own photo.
    public func setProfilePhoto(_ id: Int64?, owner: UserID) async throws {
        try await self.transaction(locking: [owner]) { tx in
            if let id {
                guard try await tx.one("SELECT EXISTS (SELECT 1 FROM photos WHERE id = \(id) AND user_id = \(owner.rawValue))")
                    .decode(Bool.self) else { throw PhotoError.noSuchPhoto }
            }
            try await tx.run("UPDATE users SET photo_id = \(id) WHERE id = \(owner.rawValue)")
        }
    }

    public func profilePhotoID(of user: UserID) async throws -> Int64? {
        try await self.single { tx in
            try await tx.first("SELECT photo_id FROM users WHERE id = \(user.rawValue)").flatMap { try $0.decode(Int64?.self) }
        }
    }

    /// The columns ``photo(_:)`` reads, in its order.
    private static let photoColumns = "id, user_id, sha256, format, bytes, width, height, caption, park_id, ride_id, created_at"

    private static func photo(_ row: PostgresRow) throws -> Photo {
        let (id, owner, sha256, format, bytes, width, height, caption, park, ride, createdAt) =
            try row.decode((Int64, Int64, String, String, Int, Int, Int, String?, String?, String?, Double).self)
        return Photo(id: id, owner: UserID(owner), sha256: sha256, format: InspectedImage.Format(rawValue: format) ?? .jpeg, bytes: bytes,
                     width: width, height: height, caption: caption, park: park.map(ParkID.init(rawValue:)),
                     ride: ride.map(RideID.init(rawValue:)), createdAt: Date(timeIntervalSince1970: createdAt))
    }
}
