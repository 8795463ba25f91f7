import Foundation

/// Who may read a post besides its author (docs: Posts).
public enum PostVisibility: String, Hashable, Sendable, CaseIterable, NamedCases {
    /// Every signed-in user who neither blocks the author nor is blocked by them.
    case `public`
    /// The author's accepted friends.
    case friends
}

/// A thumb on a post.
public enum Reaction: String, Hashable, Sendable, CaseIterable, NamedCases {
    case up, down
}

/// The order of a post's comments.
public enum CommentOrder: String, Hashable, Sendable, CaseIterable, NamedCases {
    case newest, oldest
}

/// The order of a post search.
public enum PostSearchSort: String, Hashable, Sendable, CaseIterable, NamedCases {
    /// Best match first (bm25 on SQLite, `ts_rank` on PostgreSQL), newest first among equals.
    case relevance
    case newest
}

/// Which posts a feed holds, newest first (docs: Posts, "Feeds").
public enum Feed: Hashable, Sendable {
    /// The caller's own posts, their friends' and those of the people they follow.
    case home
    /// Every public post.
    case `public`
    /// Posts tagged with the park, or with one of its rides.
    case park(ParkID)
    case ride(RideID)
    case user(UserID)
    /// A hashtag, folded (``PostRules/hashtag(_:)``), without its `#`.
    case tag(String)
}

/// A new post, before it is stored (``PostRules/violations(_:)`` checks it).
public struct PostDraft: Hashable, Sendable {
    public var text: String
    /// The author's photos, in the order shown.
    public var photos: [Int64]
    /// Catalogue parks and rides the post is about.
    public var parks: [ParkID]
    public var rides: [RideID]
    public var visibility: PostVisibility
    /// A park the author claims to have been at: stored only when a validated visit of theirs
    /// backs it (``PostRules/verificationWindow``).
    public var verifiedAt: ParkID?

    public init(text: String, photos: [Int64] = [], parks: [ParkID] = [], rides: [RideID] = [], visibility: PostVisibility = .public, verifiedAt: ParkID? = nil) {
        self.text = text
        self.photos = photos
        self.parks = parks
        self.rides = rides
        self.visibility = visibility
        self.verifiedAt = verifiedAt
    }

    /// The hashtags of the text, folded, each once, in order of appearance.
    public var hashtags: [String] { PostRules.hashtags(in: self.text) }
}

/// A change to a post by its author; `nil` leaves a field as it is. Any change marks the post edited.
public struct PostEdit: Hashable, Sendable {
    public var text: String?
    public var photos: [Int64]?
    public var parks: [ParkID]?
    public var rides: [RideID]?
    public var visibility: PostVisibility?

    public init(text: String? = nil, photos: [Int64]? = nil, parks: [ParkID]? = nil, rides: [RideID]? = nil, visibility: PostVisibility? = nil) {
        self.text = text
        self.photos = photos
        self.parks = parks
        self.rides = rides
        self.visibility = visibility
    }

    public var isEmpty: Bool { self.text == nil && self.photos == nil && self.parks == nil && self.rides == nil && self.visibility == nil }
}

/// A post search: words and filters, all applied together.
public struct PostQuery: Hashable, Sendable {
    /// The words as the user typed them (``PostRules/searchTerms(_:)`` reads them); `"…"` keeps
    /// a phrase together. Never syntax.
    public var text: String
    public var park: ParkID?
    public var ride: RideID?
    public var author: UserID?
    public var hashtag: String?
    public var from: Date?
    public var to: Date?
    public var sort: PostSearchSort

    public init(text: String, park: ParkID? = nil, ride: RideID? = nil, author: UserID? = nil, hashtag: String? = nil, from: Date? = nil, to: Date? = nil,
                sort: PostSearchSort = .relevance) {
        self.text = text
        self.park = park
        self.ride = ride
        self.author = author
        self.hashtag = hashtag
        self.from = from
        self.to = to
        self.sort = sort
    }
}

/// A searched term: a word matched as a word prefix, or a phrase (its words in a row, the last
/// one a prefix).
public enum SearchTerm: Hashable, Sendable {
    case word(String)
    case phrase([String])

    public var words: [String] {
        switch self {
        case .word(let w): [w]
        case .phrase(let ws): ws
        }
    }
}

/// Where a page of a feed, a comment thread or a search starts: opaque to clients
/// (``encoded``), and a cursor that does not decode is a 400 naming it, never a 500.
public struct PageCursor: Hashable, Sendable {
    /// A post or comment id (feeds, threads) or an offset into the ranked answer (search).
    public var position: Int64

    public init(position: Int64) { self.position = position }

    /// `c1.<base64url of the position's decimal digits>`.
    public var encoded: String { "c1." + Data(String(self.position).utf8).base64URLEncoded }

    /// The cursor a client sent, or `nil` when it is not one this service issues.
    public init?(decoding text: String) {
        guard text.utf8.count <= 64, text.hasPrefix("c1."), let data = Data(base64URLEncoded: String(text.dropFirst(3))),
              let digits = String(data: data, encoding: .utf8), !digits.isEmpty, digits.utf8.count <= 19,
              digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(digits), value >= 0 else { return nil }
        self.position = value
    }
}

/// The bounds and rules of posts, comments and reactions, shared by both stores and the HTTP layer.
public struct PostRules: Hashable, Sendable {
    /// A post's text: 5,000 characters as the app counts them (user-perceived characters).
    public static let text = TextLimits(atMost: 5_000)
    public static let comment = TextLimits(atMost: 1_000, atLeast: 1)
    public static let maximumPhotos = 10
    public static let maximumParks = 10
    public static let maximumRides = 20
    public static let maximumHashtags = 30
    /// A hashtag's letters, digits and underscores after the `#`.
    public static let hashtagLength = 1...64
    /// How long after a visit ended a post may still claim it.
    public static let verificationWindow: TimeInterval = 7 * 86_400
    /// Posts, comments and search hits a page holds at most, and by default.
    public static let largestPage = 100
    public static let defaultPage = 20
    /// Words and phrases a search reads at most; the rest are ignored.
    public static let mostSearchTerms = 8
    /// Index matches a search ranks at most, before visibility and filters: what bounds the work
    /// of a search for a word that half the posts hold.
    public static let searchCandidates = 2_000

    public init() {}

    /// Why each field of a draft is refused, by its JSON pointer; empty when it may be stored.
    public static func violations(_ draft: PostDraft) -> [(pointer: String, reason: String)] {
        var refused: [(String, String)] = []
        if Self.text.violation(draft.text) != nil { refused.append(("/text", Self.text.rule)) }
        if draft.text.allSatisfy(\.isWhitespace) && draft.photos.isEmpty {
            refused.append(("/text", "a post needs some text or at least one photo"))
        }
        refused += Self.listViolations(photos: draft.photos, parks: draft.parks, rides: draft.rides)
        if Self.text.violation(draft.text) == nil, Self.hashtags(in: draft.text).count > Self.maximumHashtags {
            refused.append(("/text", "at most \(Self.maximumHashtags) different hashtags"))
        }
        return refused
    }

    /// Why each field of an edit is refused; empty when it may be stored. Whether the post would
    /// be left with neither text nor photo is the store's check, which sees the stored fields.
    public static func violations(_ edit: PostEdit) -> [(pointer: String, reason: String)] {
        var refused: [(String, String)] = []
        if edit.isEmpty { refused.append(("", "an edit names at least one of text, photos, parks, rides, visibility")) }
        if let text = edit.text {
            if Self.text.violation(text) != nil { refused.append(("/text", Self.text.rule)) }
            else if Self.hashtags(in: text).count > Self.maximumHashtags { refused.append(("/text", "at most \(Self.maximumHashtags) different hashtags")) }
        }
        refused += Self.listViolations(photos: edit.photos ?? [], parks: edit.parks ?? [], rides: edit.rides ?? [])
        return refused
    }

    static func listViolations(photos: [Int64], parks: [ParkID], rides: [RideID]) -> [(pointer: String, reason: String)] {
        var refused: [(String, String)] = []
        if photos.count > Self.maximumPhotos { refused.append(("/photos", "at most \(Self.maximumPhotos) photos")) }
        else if Set(photos).count != photos.count { refused.append(("/photos", "each photo once")) }
        if parks.count > Self.maximumParks { refused.append(("/parks", "at most \(Self.maximumParks) parks")) }
        else if Set(parks).count != parks.count { refused.append(("/parks", "each park once")) }
        if rides.count > Self.maximumRides { refused.append(("/rides", "at most \(Self.maximumRides) rides")) }
        else if Set(rides).count != rides.count { refused.append(("/rides", "each ride once")) }
        return refused
    }

    /// Whether a text is empty for a post: only spaces.
    public static func isBlank(_ text: String) -> Bool { text.allSatisfy(\.isWhitespace) }

    /// A hashtag as stored and matched: folded like catalogue words (case and accents), or `nil`
    /// when it is not one (`#` optional; letters, digits and `_`; ``hashtagLength``).
    public static func hashtag(_ text: String) -> String? {
        let bare = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard Self.hashtagLength.contains(bare.count), bare.unicodeScalars.allSatisfy(Self.isHashtagScalar) else { return nil }
        let folded = bare.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: Locale(identifier: "en_US_POSIX"))
        return folded.isEmpty ? nil : folded
    }

    static func isHashtagScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || CharacterSet.alphanumerics.contains(scalar)
    }

    /// The hashtags of a text: `#` followed by letters, digits or `_` (not preceded by one of
    /// them, so "a#b" is none), folded, each once, in order.
    public static func hashtags(in text: String) -> [String] {
        var found: [String] = []
        var seen = Set<String>()
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            if scalars[i] == "#", i == 0 || !Self.isHashtagScalar(scalars[i - 1]) {
                var j = i + 1
                while j < scalars.count, Self.isHashtagScalar(scalars[j]) { j += 1 }
                if j > i + 1 {
                    var tag = String.UnicodeScalarView()
                    tag.append(contentsOf: scalars[(i + 1)..<min(j, i + 1 + Self.hashtagLength.upperBound * 4)])
                    if let folded = Self.hashtag(String(tag)), seen.insert(folded).inserted { found.append(folded) }
                }
                i = j
            } else {
                i += 1
            }
        }
        return found
    }

    /// The folded text both stores index for a post or comment (``CatalogText/fold(_:)``):
    /// search matches words of it, never syntax.
    public static func searchDocument(_ text: String) -> String { CatalogText.fold(text) }

    /// The terms of a search: words, and phrases between double quotes, folded as documents
    /// are; at most ``mostSearchTerms``, each word at most 64 characters. Anything a search
    /// engine would read as syntax is a space here.
    public static func searchTerms(_ query: String) -> [SearchTerm] {
        var terms: [SearchTerm] = []
        var seen = Set<SearchTerm>()
        for (index, part) in query.split(separator: "\"", omittingEmptySubsequences: false).enumerated() {
            let words = CatalogText.fold(String(part)).split(separator: " ").map { String($0.prefix(64)) }
            guard !words.isEmpty else { continue }
            // Odd parts were between quotes (an unclosed quote runs to the end).
            let parts: [SearchTerm] = index % 2 == 1 && words.count > 1 ? [.phrase(Array(words.prefix(8)))] : words.map { .word($0) }
            for term in parts where seen.insert(term).inserted { terms.append(term) }
        }
        return Array(terms.prefix(Self.mostSearchTerms))
    }

    /// Whether a folded document holds every term, as both stores match: a word as a prefix of
    /// one of its words; a phrase as words in a row, the last a prefix. Prefixes and words are
    /// compared by code point, as the stores' indexes compare them (a prefix may end inside what
    /// Swift counts as one character).
    public static func matches(_ terms: [SearchTerm], document: String) -> Bool {
        let words = document.split(separator: " ").map { Array($0.unicodeScalars) }
        func begins(_ word: [Unicode.Scalar], _ prefix: String) -> Bool { word.starts(with: prefix.unicodeScalars) }
        func equals(_ word: [Unicode.Scalar], _ other: String) -> Bool { word.elementsEqual(other.unicodeScalars) }
        return terms.allSatisfy { term in
            switch term {
            case .word(let w): return words.contains { begins($0, w) }
            case .phrase(let ws):
                guard ws.count <= words.count else { return false }
                return (0...(words.count - ws.count)).contains { start in
                    ws.indices.allSatisfy { k in k == ws.count - 1 ? begins(words[start + k], ws[k]) : equals(words[start + k], ws[k]) }
                }
            }
        }
    }
}
