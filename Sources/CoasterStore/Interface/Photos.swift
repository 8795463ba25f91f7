import CoasterCore
import Foundation

/// Photos, their files, and profile photos.
public protocol PhotoStore: Sendable {
    /// Where photo files live: `photos/` beside a SpatiaLite file, or the directory a PostgreSQL
    /// store was opened with (`--photos`).
    var photoDirectory: URL { get }

    /// Stores a cleaned image: the file first (atomically: temp file, fsync, rename, fsync of the
    /// directory), then the row; a failed row leaves no new file behind.
    ///
    /// Files are content-addressed, so one file can serve several rows, and a file is removed only
    /// while holding what serialises it with the rows of the same bytes (SpatiaLite: the writer;
    /// PostgreSQL: a lock on the file's hash). The file is written before that is taken (its fsync
    /// would hold up other writes), so a delete of the last other row with the same bytes may
    /// remove it in between; the insert's transaction therefore writes it again if it is gone, and
    /// a row never commits without its file.
    func addPhoto(owner: UserID, image: InspectedImage, sha256: String, caption: String?, park: ParkID?, ride: RideID?) async throws -> Photo

    /// Removes the photo files no row uses, and uploads a crash left half-written. For a server
    /// starting on the store, before it takes requests: an upload in flight writes its file
    /// before its row (``addPhoto(owner:image:sha256:caption:park:ride:)``).
    func sweepPhotoFiles() async throws -> PhotoSweep

    /// A photo `viewer` may see, or `nil`: no such photo and a photo they may not see are one
    /// answer. They see their own and accepted friends' photos, and a photo that something they
    /// may read shows them: the proof of an entry in a challenge they see, the cover of a list
    /// they read, a photo of a post they read. One read transaction.
    func photo(_ id: Int64, viewer: UserID) async throws -> Photo?

    /// The bytes of a stored photo.
    func photoBytes(_ photo: Photo) throws -> Data

    /// A user's photos, newest first; `before` pages by photo id. `nil` unless `viewer` is the
    /// user or an accepted friend of theirs (read in the same transaction).
    func photos(of user: UserID, viewer: UserID, limit: Int, before: Int64?) async throws -> [Photo]?

    /// Deletes a photo the owner owns; its file goes when no other row uses the same bytes.
    func deletePhoto(_ id: Int64, owner: UserID) async throws

    /// Sets (or clears) the profile picture, which must be the user's own photo.
    func setProfilePhoto(_ id: Int64?, owner: UserID) async throws

    func profilePhotoID(of user: UserID) async throws -> Int64?
}
