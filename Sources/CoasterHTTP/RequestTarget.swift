import HummingbirdCore

/// A request target's path and query parameters, read as Hummingbird's `URI` reads them.
///
/// Most targets the lane sees are plain: a path and `name=value` pairs of letters, digits and
/// `/ . - _`. Those are read here by splitting the target itself, without `URI`'s parse and its
/// new strings for every key and value (about three microseconds of a `GET /v1/locate` in
/// `perf`). Anything else (a percent sign, a `+`, a fragment, an absolute URL, a byte outside
/// ASCII) is handed to `URI`, so no target is read otherwise than the router reads it.
public struct RequestTarget {
    public let path: Substring
    /// The plain target's query (after the first `?`), `nil` if it has none or is not plain.
    @usableFromInline let query: Substring?
    /// `URI`'s reading, for a target that is not plain.
    @usableFromInline let uri: URI?

    @inlinable
    public init(_ target: String) {
        if Self.isPlain(target) {
            self.uri = nil
            if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
                self.path = target[..<mark]
                self.query = target[target.utf8.index(after: mark)...]
            } else {
                self.path = target[...]
                self.query = nil
            }
        } else {
            let uri = URI(target)
            self.uri = uri
            self.path = uri.path[...]
            self.query = nil
        }
    }

    /// The parameters as `URI.queryParameters` reads them.
    @inlinable
    public var queryParameters: TargetQuery {
        if let uri = self.uri { return TargetQuery(parsed: uri.queryParameters) }
        return TargetQuery(plain: self.query ?? "")
    }

    /// Whether the target starts with `/` and holds only letters, digits and `/ ? & = . - _`, in
    /// contiguous bytes (as every string read off the wire is; ``TargetQuery`` reads them so).
    @inlinable
    public static func isPlain(_ target: String) -> Bool {
        target.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.first == UInt8(ascii: "/") else { return false }
            return bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "."), UInt8(ascii: "-"),
                     UInt8(ascii: "_"):
                    return true
                default:
                    return false
                }
            }
        } ?? false
    }
}

/// A target's query parameters: a plain query read where a name is looked up, or, for a target
/// that is not plain, `URI`'s. Hummingbird's `FlatDictionary` (generic, from another module, so
/// not specialised here) took three of the four microseconds of reading a plain query.
public struct TargetQuery: QueryLookup {
    @usableFromInline let plain: Substring
    @usableFromInline let parsed: FlatDictionary<Substring, Substring>?

    @inlinable
    init(plain: Substring) {
        self.plain = plain
        self.parsed = nil
    }

    @inlinable
    init(parsed: FlatDictionary<Substring, Substring>) {
        self.plain = ""
        self.parsed = parsed
    }

    /// Whether a name may be given more than once, which the router refuses
    /// (``RepeatedQueryMiddleware``): the lane leaves such a target to it. Exact for a query `URI`
    /// parsed, and for a plain one of up to 16 pieces, read without allocating (empty names, as in
    /// `a=1&&b=2`, are no repeats); `true` for a longer plain one.
    @inlinable
    public var mayRepeatAName: Bool {
        if let parsed = self.parsed { return parsed.repeatedName != nil }
        return self.plain.utf8.withContiguousStorageIfAvailable(Self.mayRepeat) ?? true
    }

    @usableFromInline
    static func mayRepeat(_ query: UnsafeBufferPointer<UInt8>) -> Bool {
        var pieces = 0
        var start = 0
        while start < query.count {
            let (equals, end) = Self.piece(at: start, in: query)
            pieces += 1
            guard pieces <= 16 else { return true }
            var earlier = equals == start ? start : 0  // an empty name (`&&`) repeats nothing
            while earlier < start {
                let (earlierEquals, earlierEnd) = Self.piece(at: earlier, in: query)
                if Self.same(query, earlier..<earlierEquals, start..<equals) { return true }
                earlier = earlierEnd + 1
            }
            start = end + 1
        }
        return false
    }

    /// The piece of `query` starting at `start`: where its name ends (its first `=`, or its end)
    /// and where it ends (the next `&`, or the query's end).
    @inlinable
    static func piece(at start: Int, in query: UnsafeBufferPointer<UInt8>) -> (equals: Int, end: Int) {
        var end = start
        while end < query.count, query[end] != UInt8(ascii: "&") { end += 1 }
        var equals = start
        while equals < end, query[equals] != UInt8(ascii: "=") { equals += 1 }
        return (equals, end)
    }

    @inlinable
    static func same(_ query: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        a.count == b.count && (0..<a.count).allSatisfy { query[a.lowerBound + $0] == query[b.lowerBound + $0] }
    }

    /// The value of the first piece named `name`, as `URI.queryParameters` lists the pieces: those
    /// between `&`s in order, each a name up to its first `=` and a value after it (empty without
    /// one). An empty name matches the empty pieces `URI` lists between two `&`s, not the nothing
    /// after a last `&`.
    @inlinable
    public func value(named name: String) -> Substring? {
        if let parsed = self.parsed { return parsed[name[...]] }
        // Read as bytes: a plain query is ASCII. Through `Substring` each index was checked and
        // each slice retained, three quarters of the cost of the lookup.
        var name = name
        let found = name.withUTF8 { name in
            self.plain.utf8.withContiguousStorageIfAvailable { query in Self.find(name, in: query) }
        }
        // A plain query's bytes are contiguous (``RequestTarget/isPlain(_:)``): `found` is not `nil`.
        guard let (start, end) = found ?? nil else { return nil }
        let utf8 = self.plain.utf8
        return self.plain[utf8.index(utf8.startIndex, offsetBy: start)..<utf8.index(utf8.startIndex, offsetBy: end)]
    }

    /// The byte offsets in `query` of the value of the first piece named `name`.
    @inlinable
    static func find(_ name: UnsafeBufferPointer<UInt8>, in query: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
        var start = 0
        while start < query.count {
            let (equals, end) = Self.piece(at: start, in: query)
            if equals - start == name.count, (0..<name.count).allSatisfy({ query[start + $0] == name[$0] }) {
                return equals < end ? (equals + 1, end) : (end, end)
            }
            start = end + 1
        }
        return nil
    }
}
