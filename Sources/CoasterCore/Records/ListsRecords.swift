import Foundation

/// A ride list as one viewer sees it (docs: Lists).
public struct RideListView: Hashable, Sendable {
    public var id: Int64
    public var owner: UserSummary
    public var title: String
    public var description: String
    public var visibility: ListVisibility
    public var cover: Int64?
    /// The share token, to the owner of a `link` list only.
    public var shareToken: String?
    public var items: Int
    /// Items checked as the viewer may see them (``ListRules/shownAt(_:privacy:)``).
    public var checked: Int
    public var likes: Int
    public var followers: Int
    public var liked: Bool
    public var following: Bool
    /// The list it was copied from, when it still exists.
    public var copiedFrom: Int64?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: Int64, owner: UserSummary, title: String, description: String, visibility: ListVisibility, cover: Int64?, shareToken: String?,
                items: Int, checked: Int, likes: Int, followers: Int, liked: Bool, following: Bool, copiedFrom: Int64?, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.owner = owner
        self.title = title
        self.description = description
        self.visibility = visibility
        self.cover = cover
        self.shareToken = shareToken
        self.items = items
        self.checked = checked
        self.likes = likes
        self.followers = followers
        self.liked = liked
        self.following = following
        self.copiedFrom = copiedFrom
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One item of a list as one viewer sees it: the catalogue entry it holds (a ride or a park),
/// the owner's note and place for it, and its check as the viewer may see it.
public struct ListItemView: Hashable, Sendable {
    public var id: Int64
    public var target: ListItemTarget
    /// Set for a ride item.
    public var ride: CatalogRide?
    /// Set for a park item; a ride item's park is `ride.park`.
    public var park: CatalogPark?
    public var note: String?
    /// 0-based place in the owner's order.
    public var position: Int
    public var addedAt: Date
    /// `nil` while unchecked, or while a check is not yet shown to this viewer.
    public var check: ListCheck?

    public init(id: Int64, target: ListItemTarget, ride: CatalogRide?, park: CatalogPark?, note: String?, position: Int, addedAt: Date, check: ListCheck?) {
        self.id = id
        self.target = target
        self.ride = ride
        self.park = park
        self.note = note
        self.position = position
        self.addedAt = addedAt
        self.check = check
    }

    /// The name the item is known by.
    public var name: String { self.ride?.name ?? self.park?.name ?? self.target.id }
}

/// One change to a followed list, for the followers' page and their live pushes.
public struct ListChange: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case itemAdded = "item-added"
        case itemChecked = "item-checked"
    }

    public var id: Int64
    public var kind: Kind
    public var list: Int64
    public var listTitle: String
    public var owner: UserSummary
    public var item: Int64
    public var target: ListItemTarget
    public var itemName: String
    /// For `item-checked`: how.
    public var source: ListCheckSource?
    /// When it happened.
    public var at: Date

    public init(id: Int64, kind: Kind, list: Int64, listTitle: String, owner: UserSummary, item: Int64, target: ListItemTarget, itemName: String,
                source: ListCheckSource?, at: Date) {
        self.id = id
        self.kind = kind
        self.list = list
        self.listTitle = listTitle
        self.owner = owner
        self.item = item
        self.target = target
        self.itemName = itemName
        self.source = source
        self.at = at
    }
}

/// A change that has just become visible to others, with the followers to push it to.
public struct ListChangeDelivery: Hashable, Sendable {
    public var change: ListChange
    public var followers: [UserID]

    public init(change: ListChange, followers: [UserID]) {
        self.change = change
        self.followers = followers
    }
}

/// Why a list operation is refused.
public enum ListError: Error, Hashable, Sendable {
    /// No such list, or the caller may not see it (never "forbidden": that would say it exists).
    case noSuchList
    /// The list is the caller's to read but not to change.
    case notOwner
    case noSuchItem
    /// The catalogue has no such ride or park (the JSON pointer of the field).
    case unknownTarget(pointer: String)
    /// The list already holds it; its item id.
    case duplicateItem(existing: Int64)
    /// `position` is past the end: the largest allowed.
    case positionOutOfRange(largest: Int)
    case tooManyItems(limit: Int)
    case tooManyLists(limit: Int)
    case tooManyFollows(limit: Int)
    /// A cover that is not a photo of the owner's.
    case noSuchPhoto
    /// Following one's own list, or one's own lists.
    case ownList
    case noSuchUser
}
