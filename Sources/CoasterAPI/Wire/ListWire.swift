import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import Hummingbird

/// A ride list as the caller sees it (docs: Lists). `checked` counts the checks the caller may
/// see; `shareUrl` is the owner's alone, on a `link` list.
struct ListWire: Encodable, Sendable, ResponseEncodable {
    var id: Int64
    var owner: UserWire
    var title: String
    var description: String
    var visibility: String
    var coverPhotoId: Int64?
    var shareUrl: String?
    var items: Int
    var checked: Int
    var likes: Int
    var followers: Int
    var liked: Bool
    var following: Bool
    var copiedFrom: Int64?
    var createdAt: Date
    var updatedAt: Date

    init(_ view: RideListView) {
        self.id = view.id
        self.owner = UserWire(view.owner)
        self.title = view.title
        self.description = view.description
        self.visibility = view.visibility.rawValue
        self.coverPhotoId = view.cover
        self.shareUrl = view.shareToken.map { "/v1/shared-lists/\($0)" }
        self.items = view.items
        self.checked = view.checked
        self.likes = view.likes
        self.followers = view.followers
        self.liked = view.liked
        self.following = view.following
        self.copiedFrom = view.copiedFrom
        self.createdAt = view.createdAt
        self.updatedAt = view.updatedAt
    }
}

/// When and how an item was checked.
struct ListCheckWire: Encodable, Sendable {
    var at: Date
    /// `ride-log`, `visit` or `by hand`.
    var how: String
}

/// One item of a list: the catalogue ride (with its park) or park it holds, the owner's note and
/// place for it, and its check as the caller may see it (`null`: unchecked, or not shown yet).
struct ListItemWire: Encodable, Sendable, ResponseEncodable {
    var id: Int64
    var kind: String
    var ride: CatalogRideWire?
    var park: CatalogParkWire?
    var note: String?
    var position: Int
    var addedAt: Date
    var checked: ListCheckWire?

    init(_ item: ListItemView) {
        self.id = item.id
        self.kind = item.target.kind
        self.ride = item.ride.map(CatalogRideWire.init)
        // A ride's park is the ride's; a park item names its park.
        self.park = item.ride == nil ? item.park.map(CatalogParkWire.init) : nil
        self.note = item.note
        self.position = item.position
        self.addedAt = item.addedAt
        self.checked = item.check.map { ListCheckWire(at: $0.at, how: $0.source.rawValue) }
    }

    enum CodingKeys: String, CodingKey { case id, kind, ride, park, note, position, addedAt, checked }

    /// As synthesized, but `checked` is written even when `null`: "not checked" said out loud.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.id, forKey: .id)
        try c.encode(self.kind, forKey: .kind)
        try c.encodeIfPresent(self.ride, forKey: .ride)
        try c.encodeIfPresent(self.park, forKey: .park)
        try c.encodeIfPresent(self.note, forKey: .note)
        try c.encode(self.position, forKey: .position)
        try c.encode(self.addedAt, forKey: .addedAt)
        try c.encode(self.checked, forKey: .checked)
    }
}

/// A change to a followed list, as the changes page and the `list-change` live message write it
/// (``LiveMessage/listChange(_:)`` writes the same members).
struct ListChangeWire: Encodable, Sendable {
    struct ListRef: Encodable, Sendable {
        var id: Int64
        var title: String
    }

    struct ItemRef: Encodable, Sendable {
        var id: Int64
        var kind: String
        var targetId: String
        var name: String
    }

    var id: Int64
    var kind: String
    var list: ListRef
    var owner: UserWire
    var item: ItemRef
    var how: String?
    var at: Date

    init(_ change: ListChange) {
        self.id = change.id
        self.kind = change.kind.rawValue
        self.list = ListRef(id: change.list, title: change.listTitle)
        self.owner = UserWire(change.owner)
        self.item = ItemRef(id: change.item, kind: change.target.kind, targetId: change.target.id, name: change.itemName)
        self.how = change.source?.rawValue
        self.at = change.at
    }
}

struct ListsResponse: ResponseEncodable, Sendable {
    var lists: [ListWire]
}

/// `GET /v1/lists/{listId}` and `GET /v1/shared-lists/{token}`: the list and a page of its items.
struct ListPageResponse: ResponseEncodable, Sendable {
    var list: ListWire
    var items: [ListItemWire]
}

struct ListChangesResponse: ResponseEncodable, Sendable {
    var changes: [ListChangeWire]
}
