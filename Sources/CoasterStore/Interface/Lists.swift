import CoasterCore
import Foundation

/// Ride lists (docs: Lists): a user's lists of catalogue rides and parks, checked off by the
/// evidence the geofences validated, shared by visibility or link, liked, followed and copied.
///
/// Who may read a list (``list(_:viewer:privacy:)``): its owner always; anyone else never when
/// either of the two blocks the other; otherwise `public` lists every signed-in user, `friends`
/// lists the owner's accepted friends, `private` and `link` lists nobody (a `link` list is read
/// through ``sharedList(token:sort:privacy:)``). What may not be read answers as if it did not exist.
///
/// Checking off: the stores' own ride-log and visit writes check, in the same transaction, every
/// unchecked item of the rider's lists that holds the ride's catalogue entry (or the park), unless
/// the owner unchecked it by hand; each check records a change for the followers. Adding an item
/// the owner already has evidence for (a ride log of the ride, a visit to the park) checks it at
/// once, with that evidence's time and source. Others see a check from ``ListRules/shownAt(_:privacy:)``
/// on, and one made by a visit only once the visit's last evidence is older than the location
/// time-to-live (``LocationPrivacy/placesShownBefore(_:)``), the rule of a post's "I was there":
/// before that the item reads unchecked to them and the change is not on their page.
public protocol ListStore: Sendable {
    /// Stores a draft ``ListRules`` checked: refuses an owner at
    /// `rules.maximumLists` and a cover that is not the owner's photo. A `link` list gets its
    /// share token here.
    func createList(_ draft: ListDraft, owner: UserID, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView

    /// The list as `viewer` sees it, or `nil` when they may not read it.
    func list(_ id: Int64, viewer: UserID, privacy: LocationPrivacy) async throws -> RideListView?

    /// The `link` list whose share token this is, read by anyone who holds it (signed in or not),
    /// or `nil` (no such token, revoked, or the list is no longer `link`).
    func sharedList(token: String, sort: ListSort, privacy: LocationPrivacy) async throws -> (list: RideListView, items: [ListItemView])?

    /// `owner`'s lists that `viewer` may read, newest first; `before` pages by list id.
    func lists(of owner: UserID, viewer: UserID, privacy: LocationPrivacy, limit: Int, before: Int64?) async throws -> [RideListView]

    /// A page of a list's items in `sort` order as `viewer` sees them; `nil` when they may not read it.
    func items(of list: Int64, viewer: UserID, sort: ListSort, privacy: LocationPrivacy, limit: Int, offset: Int) async throws -> [ListItemView]?

    /// The owner changes the list's own fields. Leaving `link` revokes the token; becoming
    /// `link`, or `newLink`, issues a new one.
    func editList(_ id: Int64, owner: UserID, edit: ListEdit, privacy: LocationPrivacy) async throws -> RideListView

    /// The owner deletes the list: items, likes, follows and changes go with it.
    func deleteList(_ id: Int64, owner: UserID) async throws

    /// The owner adds a catalogue ride or park at `position` (`nil`: the end); checked at once
    /// when the owner has evidence for it. Refuses an unknown target, one the list holds, a
    /// position past the end, and a list at `rules.maximumItems`. Records an `item-added` change.
    func addItem(to list: Int64, owner: UserID, target: ListItemTarget, note: String?, position: Int?, rules: ListRules,
                 privacy: LocationPrivacy) async throws -> ListItemView

    /// The owner moves, annotates, checks or unchecks an item. Checking by hand records an
    /// `item-checked` change.
    func editItem(_ item: Int64, in list: Int64, owner: UserID, edit: ListItemEdit, privacy: LocationPrivacy) async throws -> ListItemView

    /// The owner removes an item; those after it move up by one.
    func removeItem(_ item: Int64, from list: Int64, owner: UserID) async throws

    /// Likes or unlikes a list the user may read.
    func setListLike(_ id: Int64, user: UserID, liked: Bool, privacy: LocationPrivacy) async throws -> RideListView

    /// Follows or unfollows a list the user may read and does not own.
    func setListFollow(_ id: Int64, user: UserID, following: Bool, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView

    /// Follows or unfollows every list of `owner` the user may read, present and future.
    func setListsFollow(of owner: UserID, user: UserID, following: Bool, rules: ListRules) async throws

    /// Copies a list the user may read into a new private list of theirs ("make it mine"): same
    /// title, description and items in the same order with their notes, checked by the copier's
    /// own evidence only.
    func copyList(_ id: Int64, user: UserID, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView

    /// Changes to the lists `follower` follows (one by one, or all of an owner's) that they may
    /// read, shown to them by now (``ListRules/shownAt(_:privacy:)``), newest first; `before`
    /// pages by change id.
    func listChanges(for follower: UserID, privacy: LocationPrivacy, limit: Int, before: Int64?) async throws -> [ListChange]

    /// Changes that became visible to followers by `now` and were not yet delivered, oldest
    /// first, at most `limit`, marked delivered in the same transaction, with the followers
    /// who may read each: what the live pushes send.
    func deliverListChanges(now: Date, privacy: LocationPrivacy, limit: Int) async throws -> [ListChangeDelivery]
}
