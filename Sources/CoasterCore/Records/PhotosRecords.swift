import Foundation

/// A stored photo's metadata.
public struct Photo: Hashable, Sendable {
    public var id: Int64
    public var owner: UserID
    public var sha256: String
    public var format: InspectedImage.Format
    public var bytes: Int
    public var width: Int
    public var height: Int
    public var caption: String?
    public var park: ParkID?
    public var ride: RideID?
    public var createdAt: Date

    public init(id: Int64, owner: UserID, sha256: String, format: InspectedImage.Format, bytes: Int, width: Int, height: Int, caption: String?, park: ParkID?, ride: RideID?, createdAt: Date) {
        self.id = id
        self.owner = owner
        self.sha256 = sha256
        self.format = format
        self.bytes = bytes
        self.width = width
        self.height = height
        self.caption = caption
        self.park = park
        self.ride = ride
        self.createdAt = createdAt
    }
}

public enum PhotoError: Error, Equatable, Sendable {
    case noSuchPhoto
    /// The tagged park or ride is not one the user has visited.
    case tagNotVisited(String)
}

/// What ``PhotoStore/sweepPhotoFiles()`` removed.
public struct PhotoSweep: Sendable, Equatable {
    /// Complete files no row uses (a crash between a file and its row's commit).
    public var unused = 0
    /// Files left half-written by a crash during an upload.
    public var partial = 0

    public init(unused: Int = 0, partial: Int = 0) {
        self.unused = unused
        self.partial = partial
    }
}
