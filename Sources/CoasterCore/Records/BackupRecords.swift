import Foundation

/// What a backup wrote.
public struct BackupSummary: Sendable {
    public var path: String
    public var bytes: Int
    public var photos: Int
    /// Photos deleted after the snapshot, before their files were copied: left out of the copy as
    /// if deleted in it (their rows would point at nothing).
    public var photosLeftOut: Int
    public var seconds: Double

    public init(path: String, bytes: Int, photos: Int, photosLeftOut: Int, seconds: Double) {
        self.path = path
        self.bytes = bytes
        self.photos = photos
        self.photosLeftOut = photosLeftOut
        self.seconds = seconds
    }
}
