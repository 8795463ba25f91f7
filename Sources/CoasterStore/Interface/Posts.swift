import CoasterCore
import Foundation

/// Trip reports (docs: Posts): posts with photos and tags, their feeds, thumbs, comments and
/// search.
///
/// Who may read a post: its author always; anyone else never when either of the two blocks the
/// other; otherwise a `public` post every signed-in user, a `friends` post the author's accepted
/// friends. What may not be read answers as if it did not exist (``PostError/noSuchPost``), and
/// its comments and thumbs with it. A comment by someone the viewer blocks or is blocked by is
/// left out of the viewer's thread (the post's count still counts it: a count names nobody).
///
/// Counts (thumbs up, down, comments) are kept in the post's row by the same transaction as the
/// change, and by the deletion of an account (SQLite: triggers; PostgreSQL: triggers), so they
/// are exact.
///
/// Pages are newest first by id. `after` is the id of the last post (or comment) of the page
/// before: the next page holds older ones. `since` is the id of the newest a client holds: the
/// page holds the `limit` posts just after it (the oldest of the newer ones), shown newest first,
/// so that a client that gets a full page asks again with its newest and skips nothing.
public protocol PostStore: Sendable {
    /// Stores a draft ``PostRules`` checked: photos must be the author's, tags known to the
    /// catalogue, `verifiedAt` backed by a validated visit (``PostError``).
    func createPost(_ draft: PostDraft, author: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView

    /// The post as `viewer` sees it, or `nil` when they may not read it.
    func post(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView?

    /// The author changes the post; it reads edited from then on.
    func editPost(_ id: Int64, author: UserID, edit: PostEdit, now: Date, privacy: LocationPrivacy) async throws -> PostView

    /// The author deletes the post: comments and thumbs go with it.
    func deletePost(_ id: Int64, author: UserID) async throws

    /// A page of a feed as `viewer` may read it, newest first.
    func feed(_ feed: Feed, viewer: UserID, after: Int64?, since: Int64?, limit: Int, now: Date, privacy: LocationPrivacy) async throws -> [PostView]

    /// Sets (`.some`) or clears (`nil`) the viewer's thumb on a post they may read; the post as
    /// they see it afterwards.
    func setReaction(_ reaction: Reaction?, post: Int64, user: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView

    /// Comments on a post `user` may read.
    func addComment(to post: Int64, author: UserID, text: String, now: Date) async throws -> CommentView

    /// A page of a post's comments, or `nil` when the viewer may not read the post. `after` is
    /// the id of the last comment of the page before.
    func comments(on post: Int64, viewer: UserID, order: CommentOrder, after: Int64?, limit: Int) async throws -> [CommentView]?

    /// Deletes a comment: its author may, and so may the author of the post it is on.
    func deleteComment(_ id: Int64, user: UserID) async throws

    /// Posts the viewer may read whose text, or one of whose comments the viewer may read,
    /// holds every term (``PostRules/matches(_:document:)``), filtered, in `query.sort` order;
    /// at most ``PostRules/searchCandidates`` index matches are ranked. `offset` pages.
    func searchPosts(_ query: PostQuery, terms: [SearchTerm], viewer: UserID, limit: Int, offset: Int, now: Date, privacy: LocationPrivacy) async throws -> [PostHit]
}
