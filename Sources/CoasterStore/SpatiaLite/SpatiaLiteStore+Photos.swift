import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Where photo files live: `photos/` beside the database file.
    public var photoDirectory: URL {
        URL(fileURLWithPath: self.path).deletingLastPathComponent().appendingPathComponent("photos", isDirectory: true)
    }

    func photoURL(_ sha256: String, _ format: InspectedImage.Format) -> URL {
        PhotoFiles.url(sha256, format, under: self.photoDirectory)
    }

    /// Stores a cleaned image: the file first (atomically: temp file, fsync, rename, fsync of the
    /// directory), then the row; a failed row leaves no new file behind.
    ///
    /// Files are content-addressed, so one file can serve several rows, and a file is removed only
    /// by a write that holds the store's writer (``removePhotoFileIfUnused(_:_:_:)``). The file is
    /// written before the writer is taken (its fsync would hold up every other write), so a delete
    /// of the last other row with the same bytes may remove it in between; the insert's
    /// transaction therefore writes it again if it is gone, and a row never commits without its file.
    public func addPhoto(owner: UserID, image: InspectedImage, sha256: String, caption: String?, park: ParkID?, ride: RideID?) async throws -> Photo {
        let url = self.photoURL(sha256, image.format)
        let created = try PhotoFiles.writeAtomically(image.bytes, to: url)
        let now = self.now()
        do {
            return try await self.pool.write { db in
                var tagPark = park
                if let ride {
                    guard let ridePark = try String.fetchOne(db, sql: "SELECT park_id FROM rides WHERE id = ?", arguments: [ride.rawValue]) else {
                        throw PhotoError.tagNotVisited(ride.rawValue)
                    }
                    tagPark = tagPark ?? ParkID(rawValue: ridePark)
                    guard tagPark?.rawValue == ridePark else { throw PhotoError.tagNotVisited(ride.rawValue) }
                }
                if let tagPark, try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM visits WHERE user_id = ? AND park_id = ?)",
                                                  arguments: [owner.rawValue, tagPark.rawValue]) != true {
                    throw PhotoError.tagNotVisited(tagPark.rawValue)
                }
                try db.execute(sql: """
                    INSERT INTO photos (user_id, sha256, format, bytes, width, height, caption, park_id, ride_id, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [owner.rawValue, sha256, image.format.rawValue, image.bytes.count, image.width, image.height, caption,
                                     tagPark?.rawValue, ride?.rawValue, now.timeIntervalSince1970])
                let id = db.lastInsertedRowID
                _ = try PhotoFiles.writeAtomically(image.bytes, to: url)
                return Photo(id: id, owner: owner, sha256: sha256, format: image.format, bytes: image.bytes.count,
                             width: image.width, height: image.height, caption: caption, park: tagPark, ride: ride, createdAt: now)
            }
        } catch {
            if created {
                try? await self.pool.writeWithoutTransaction { db in try self.removePhotoFileIfUnused(sha256, image.format, db) }
            }
            throw error
        }
    }

    /// Removes the file of `sha256` unless a row still uses it. Call it holding the writer, outside
    /// a transaction (after the delete that made it unused has committed): an insert of the same
    /// bytes then either committed before, and its row keeps the file, or commits after, and writes
    /// the file again (``addPhoto(owner:image:sha256:caption:park:ride:)``).
    func removePhotoFileIfUnused(_ sha256: String, _ format: InspectedImage.Format, _ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE sha256 = ?)", arguments: [sha256]) == false else { return }
        try? FileManager.default.removeItem(at: self.photoURL(sha256, format))
    }

    /// Removes the photo files no row uses, and uploads a crash left half-written. For a server
    /// starting on the store, before it takes requests: an upload in flight writes its file
    /// before its row (``addPhoto(owner:image:sha256:caption:park:ride:)``).
    public func sweepPhotoFiles() async throws -> PhotoSweep {
        guard FileManager.default.fileExists(atPath: self.photoDirectory.path) else { return PhotoSweep() }
        return try await self.pool.writeWithoutTransaction { db in
            var kept = Set<String>()
            for row in try Row.fetchAll(db, sql: "SELECT DISTINCT sha256, format FROM photos") {
                guard let format = InspectedImage.Format(rawValue: row["format"]) else { continue }
                kept.insert(PhotoFiles.name(row["sha256"], format))
            }
            var sweep = PhotoSweep()
            for stray in try PhotoFiles.strays(under: self.photoDirectory, keeping: kept) {
                if stray.sha256 == nil { sweep.partial += 1 } else { sweep.unused += 1 }
                try? FileManager.default.removeItem(at: stray.url)
            }
            return sweep
        }
    }

    /// A photo `viewer` may see (theirs, an accepted friend's, the proof of an entry in a
    /// challenge they may see, the cover of a list they may read, in a post they may read, or the
    /// profile photo of a findable user), or `nil`: no such photo and a photo they may not see are
    /// one answer. One read for the photo and what lets the viewer see it.
    public func photo(_ id: Int64, viewer: UserID) async throws -> Photo? {
        try await self.pool.read { db in
            guard let photo = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM photos WHERE id = ?"), arguments: [id]).map(Self.photo)
            else { return nil }
            guard try Self.isSelfOrFriend(photo.owner, of: viewer, db)
                || Bool.fetchOne(db.cachedStatement(sql: Self.visibleProof), arguments: ["photo": id, "viewer": viewer.rawValue]) == true
                || Bool.fetchOne(db.cachedStatement(sql: Self.visibleCover), arguments: ["photo": id, "viewer": viewer.rawValue]) == true
                || Bool.fetchOne(db.cachedStatement(sql: Self.visiblePostPhoto), arguments: ["photo": id, "viewer": viewer.rawValue]) == true
                || Bool.fetchOne(db.cachedStatement(sql: Self.visibleFindableFace), arguments: ["photo": id, "viewer": viewer.rawValue]) == true
            else { return nil }
            return photo
        }
    }

    /// Whether a photo is the proof of an entry in a challenge the viewer may see (public, or
    /// they are a member or invited): the gallery shows it to them, so its bytes must load.
    static let visibleProof = """
        SELECT EXISTS (
            SELECT 1 FROM challenge_entries e JOIN challenges c ON c.id = e.challenge_id
            WHERE e.photo_id = :photo AND (c.visibility = 'public' OR EXISTS (
                SELECT 1 FROM challenge_members m WHERE m.challenge_id = c.id AND m.user_id = :viewer AND m.state IN ('member', 'invited'))))
        """

    /// Whether a photo is in a post the viewer may read: the post shows it to them.
    static let visiblePostPhoto = """
        SELECT EXISTS (SELECT 1 FROM post_photos pp JOIN posts p ON p.id = pp.post_id WHERE pp.photo_id = :photo AND \(SpatiaLiteStore.postReadable()))
        """

    /// Whether a photo is the profile photo of a findable user who has not blocked the viewer nor
    /// been blocked by them: people search shows it (docs: People). `users_by_photo` finds them.
    static let visibleFindableFace = """
        SELECT EXISTS (SELECT 1 FROM users u WHERE u.photo_id = :photo AND u.findable = 1
                       AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = :viewer AND b.blocked = u.id)
                       AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = u.id AND b.blocked = :viewer))
        """

    /// Whether a photo is the cover of a list the viewer may read: the list shows it to them.
    static let visibleCover = "SELECT EXISTS (SELECT 1 FROM lists l WHERE l.cover_photo_id = :photo AND \(SpatiaLiteStore.readable()))"

    /// The bytes of a stored photo.
    public func photoBytes(_ photo: Photo) throws -> Data {
        try Data(contentsOf: self.photoURL(photo.sha256, photo.format))
    }

    /// A user's photos, newest first; `before` pages by photo id. `nil` unless `viewer` is the
    /// user or an accepted friend of theirs (read in the same transaction).
    public func photos(of user: UserID, viewer: UserID, limit: Int, before: Int64?) async throws -> [Photo]? {
        try await self.pool.read { db in
            guard try Self.isSelfOrFriend(user, of: viewer, db) else { return nil }
            return try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM photos WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?"),
                                    arguments: [user.rawValue, before ?? Int64.max, limit]).map(Self.photo)
        }
    }

    /// Deletes a photo the owner owns; its file goes when no other row uses the same bytes.
    public func deletePhoto(_ id: Int64, owner: UserID) async throws {
        try await self.pool.writeWithoutTransaction { db in
            var deleted: Photo?
            try db.inTransaction {
                deleted = try Row.fetchOne(db, sql: "SELECT * FROM photos WHERE id = ? AND user_id = ?", arguments: [id, owner.rawValue])
                    .map(Self.photo)
                guard deleted != nil else { return .rollback }
                try db.execute(sql: "DELETE FROM photos WHERE id = ?", arguments: [id])
                return .commit
            }
            guard let photo = deleted else { throw PhotoError.noSuchPhoto }
            // After the commit (a failed one keeps the row and its file), before the writer is let go.
            try self.removePhotoFileIfUnused(photo.sha256, photo.format, db)
        }
    }

    /// Sets (or clears) the profile picture, which must be the user's own photo.
    public func setProfilePhoto(_ id: Int64?, owner: UserID) async throws {
        try await self.pool.write { db in
            if let id {
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE id = ? AND user_id = ?)",
                                        arguments: [id, owner.rawValue]) == true else { throw PhotoError.noSuchPhoto }
            }
            try db.execute(sql: "UPDATE users SET photo_id = ? WHERE id = ?", arguments: [id, owner.rawValue])
        }
    }

    public func profilePhotoID(of user: UserID) async throws -> Int64? {
        try await self.pool.read { db in try Int64.fetchOne(db, sql: "SELECT photo_id FROM users WHERE id = ?", arguments: [user.rawValue]) }
    }

    static func photo(_ row: Row) -> Photo {
        Photo(id: row["id"], owner: UserID(row["user_id"] as Int64), sha256: row["sha256"],
              format: InspectedImage.Format(rawValue: row["format"]) ?? .jpeg, bytes: row["bytes"], width: row["width"], height: row["height"],
              caption: row["caption"], park: (row["park_id"] as String?).map(ParkID.init(rawValue:)),
              ride: (row["ride_id"] as String?).map(RideID.init(rawValue:)), createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }
}
