/// How long a stored text may be, in what a person counts (characters, as the app shows them)
/// and in what storage and every answer that repeats it pay (UTF-8 bytes), and what it may not
/// hold.
///
/// Both counts are needed: one character can be thousands of bytes ("a" and 300,000 combining
/// accents is one character), and every leaderboard page, friend list and message thread repeats
/// a name or a text. NUL is refused: SQLite's text functions and C strings end at it, so a text
/// with one would be stored or compared as less than what was sent.
public struct TextLimits: Hashable, Sendable {
    public var characters: ClosedRange<Int>
    public var bytes: Int

    public init(characters: ClosedRange<Int>, bytes: Int) {
        self.characters = characters
        self.bytes = bytes
    }

    /// Up to `maximum` characters and four bytes a character at most (a character of one
    /// code point is at most four bytes in UTF-8).
    public init(atMost maximum: Int, atLeast minimum: Int = 0) {
        self.init(characters: minimum...maximum, bytes: 4 * maximum)
    }

    public enum Violation: Error, Hashable, Sendable {
        case tooShort, tooLong, tooManyBytes, nul
    }

    /// Why `text` is refused, or `nil` if it fits. Bytes are checked first, so that a huge text
    /// costs no walk over its characters.
    public func violation(_ text: String) -> Violation? {
        let utf8 = text.utf8
        if utf8.count > self.bytes { return .tooManyBytes }
        if utf8.contains(0) { return .nul }
        let count = text.count
        if count > self.characters.upperBound { return .tooLong }
        if count < self.characters.lowerBound { return .tooShort }
        return nil
    }

    /// A sentence saying what fits, for a problem's detail: "1 to 64 characters (at most 256 bytes in UTF-8), no NUL".
    public var rule: String {
        let range = self.characters.lowerBound == 0 ? "at most \(self.characters.upperBound)" : "\(self.characters.lowerBound) to \(self.characters.upperBound)"
        return "\(range) characters (at most \(self.bytes) bytes in UTF-8), with no NUL"
    }

    public static let displayName = TextLimits(atMost: 64, atLeast: 1)
    public static let bio = TextLimits(atMost: 500)
    public static let caption = TextLimits(atMost: 500)
    public static let message = TextLimits(atMost: 2000, atLeast: 1)
}
