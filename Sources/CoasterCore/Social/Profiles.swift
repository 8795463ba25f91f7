import Foundation

/// A user's status: one emoji and a short text ("🎢 Riding Steel Vengeance all day").
public struct ProfileStatus: Hashable, Sendable {
    public var emoji: String
    /// May be empty: the emoji alone is a status.
    public var text: String

    public init(emoji: String, text: String = "") {
        self.emoji = emoji
        self.text = text
    }
}

/// What a user shows of themselves besides their name and bio (docs: People): their status,
/// home park and favourite rides, all from the catalogue.
public struct ProfileCard: Hashable, Sendable {
    public var status: ProfileStatus?
    public var homePark: CatalogPark?
    /// In the user's order, at most ``PeopleRules/maximumFavouriteRides``.
    public var favouriteRides: [CatalogRide]

    public init(status: ProfileStatus? = nil, homePark: CatalogPark? = nil, favouriteRides: [CatalogRide] = []) {
        self.status = status
        self.homePark = homePark
        self.favouriteRides = favouriteRides
    }
}

/// How many users follow a user's public posts, and how many they follow.
public struct FollowCounts: Hashable, Sendable {
    public var followers: Int
    public var following: Int

    public init(followers: Int = 0, following: Int = 0) {
        self.followers = followers
        self.following = following
    }
}

/// Why a people operation was refused by what the store holds (docs: People, "Errors").
public enum PeopleError: Error, Equatable, Sendable {
    /// `homePark` names no park of the catalogue.
    case unknownPark
    /// `favouriteRides[index]` names no ride of the catalogue.
    case unknownRide(index: Int)
    /// `favouriteRides[index]` is the same ride as an earlier one (a fenced ride's id and its
    /// catalogue entry's are one ride).
    case duplicateRide(index: Int)
    case cannotFollowSelf
    /// The caller follows ``PeopleRules/maximumFollowing`` users already.
    case tooManyFollows(limit: Int)
}

/// Why a status was refused, with the JSON pointer of the member at fault.
public struct StatusViolation: Error, Hashable, Sendable {
    public var pointer: String
    public var reason: String
}

/// The rules of profiles, finding people and following them, shared by both stores and the HTTP
/// layer. The tunables are instance members, so that tests can make the bounds small.
public struct PeopleRules: Hashable, Sendable {
    /// Users one user may follow.
    public var maximumFollowing = 5_000
    /// Suggestions: the caller's coaster credits whose riders are read, the first by ride id.
    public var suggestionCredits = 300
    /// Suggestions: findable riders read for each of those credits, the first by user id.
    public var ridersPerCredit = 50
    /// Suggestions: the caller's friends whose friends are read, the first by user id.
    public var friendsConsidered = 250
    /// Suggestions: friends read of each of those friends, on each side of the friendship table
    /// (where they asked, by id; where they were asked, by when), so twice this at most.
    public var friendsOfEachFriend = 50
    /// Suggestions: candidates measured exactly (shared credits and mutual friends counted in
    /// full), as a multiple of the page asked for.
    public var measuredPerPlace = 2

    public static let statusText = TextLimits(atMost: 80)
    /// An emoji is one character, but may be many code points (a family with skin tones is ten).
    public static let emojiBytes = 64
    public static let maximumFavouriteRides = 10
    /// A search's `q`, as typed.
    public static let query = TextLimits(atMost: 64, atLeast: 1)
    public static let largestPage = 50
    public static let defaultPage = 20
    /// Words of a display name (and of a username) from which a name key starts: a name is
    /// found by a prefix of any of its first words, up to its end.
    public static let keyWords = 8

    public init() {}

    /// Whether `text` is exactly one emoji as a person sees one: one character, every code point
    /// of it part of an emoji sequence (emoji, skin-tone modifiers, joiners, variation selector 16,
    /// keycap, tag characters), shown as an emoji by default or asked to be by U+FE0F. A digit,
    /// `#` or `*` is an emoji only as a keycap ("1️⃣"); "©" or "❤" without U+FE0F is text.
    public static func isEmoji(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= Self.emojiBytes, text.count == 1, let first = text.unicodeScalars.first else { return false }
        var selector = false, keycap = false
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0xFE0F: selector = true
            case 0x20E3: keycap = true
            case 0x200D, 0xE0020...0xE007F: continue
            default:
                let properties = scalar.properties
                guard properties.isEmoji || properties.isEmojiModifier else { return false }
            }
        }
        if first.isASCII { return keycap }
        return first.properties.isEmojiPresentation || selector
    }

    /// The status to store: the text trimmed of surrounding white space, or why it is refused
    /// (`/status/emoji`, `/status/text`).
    public static func status(emoji: String, text: String) throws(StatusViolation) -> ProfileStatus {
        guard Self.isEmoji(emoji) else {
            throw StatusViolation(pointer: "/status/emoji", reason: "one emoji (one character; a text-style symbol needs U+FE0F)")
        }
        guard text.utf8.count <= 4 * Self.statusText.bytes else { throw StatusViolation(pointer: "/status/text", reason: Self.statusText.rule) }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.statusText.violation(trimmed) == nil else { throw StatusViolation(pointer: "/status/text", reason: Self.statusText.rule) }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw StatusViolation(pointer: "/status/text", reason: "one line: no line breaks or other control characters")
        }
        return ProfileStatus(emoji: emoji, text: trimmed)
    }

    /// The keys under which a findable user is found: their folded display name (``CatalogText/fold(_:)``:
    /// lower case, no accents, marks as spaces) from each of its first ``keyWords`` words to its
    /// end, and the same of their username ("ann_lee" also from "lee"). A search is a prefix of a
    /// key, so "mar" finds "Ann-Marie Lee" and "ann marie" does too. Sorted, each once.
    public static func nameKeys(displayName: String, username: String) -> [String] {
        var keys = Set<String>()
        for name in [displayName, username] {
            let words = CatalogText.fold(name).split(separator: " ")
            for start in words.indices.prefix(Self.keyWords) { keys.insert(words[start...].joined(separator: " ")) }
        }
        return keys.sorted()
    }

    /// The key a search looks for, as ``nameKeys(displayName:username:)`` folds names; empty when
    /// `q` holds no letter or digit (it finds no one).
    public static func searchKey(_ q: String) -> String { CatalogText.fold(q) }

    /// The greatest key that starts with `key`: a search reads the range `key ..< searchEnd(key)`
    /// of an index in byte order (SQLite's BINARY, PostgreSQL's `COLLATE "C"`). U+10FFFF encodes
    /// as the largest UTF-8 there is, and a folded key holds only letters, digits and spaces.
    public static func searchEnd(_ key: String) -> String { key + "\u{10FFFF}" }

    /// Rows of a name-key range in key order, as many as finding `limit` users needs: one user
    /// has at most `2 × keyWords` keys.
    public static func keysToRead(limit: Int) -> Int { limit * 2 * Self.keyWords }

    /// The users of key-ordered rows, each once, in the order their first key came.
    public static func firstSeen(_ users: [UserID], limit: Int) -> [UserID] {
        var seen = Set<UserID>()
        var ordered: [UserID] = []
        for user in users where seen.insert(user).inserted {
            ordered.append(user)
            if ordered.count == limit { break }
        }
        return ordered
    }

    /// One candidate for "riders like you", with the counts it is ranked by.
    public struct Candidate: Hashable, Sendable {
        public var user: UserID
        public var sharedCredits: Int
        public var mutualFriends: Int

        public init(user: UserID, sharedCredits: Int, mutualFriends: Int) {
            self.user = user
            self.sharedCredits = sharedCredits
            self.mutualFriends = mutualFriends
        }
    }

    /// "Riders like you" in order: friends of friends first, then by coaster credits shared
    /// (most first), then by id. Candidates sharing nothing are no suggestion.
    public static func ranked(_ candidates: [Candidate], limit: Int) -> [Candidate] {
        candidates.filter { $0.sharedCredits > 0 || $0.mutualFriends > 0 }
            .sorted { a, b in
                if (a.mutualFriends > 0) != (b.mutualFriends > 0) { return a.mutualFriends > 0 }
                if a.sharedCredits != b.sharedCredits { return a.sharedCredits > b.sharedCredits }
                return a.user < b.user
            }
            .prefix(limit).map { $0 }
    }

    /// The candidates of the bounded samples (``ridersPerCredit`` riders of each of
    /// ``suggestionCredits`` credits, ``friendsOfEachFriend`` friends of each of
    /// ``friendsConsidered`` friends) counted from the samples alone, for the first ranking: each
    /// pair is a (credit or friend, candidate) the sample read. `excluded` are never candidates.
    public static func sampled(credits: [(String, UserID)], friendsOfFriends: [(UserID, UserID)], excluding excluded: Set<UserID>) -> [Candidate] {
        var shared: [UserID: Set<String>] = [:], mutual: [UserID: Set<UserID>] = [:]
        for (ride, user) in credits where !excluded.contains(user) { shared[user, default: []].insert(ride) }
        for (friend, user) in friendsOfFriends where !excluded.contains(user) { mutual[user, default: []].insert(friend) }
        return Set(shared.keys).union(mutual.keys).map {
            Candidate(user: $0, sharedCredits: shared[$0]?.count ?? 0, mutualFriends: mutual[$0]?.count ?? 0)
        }
    }
}
