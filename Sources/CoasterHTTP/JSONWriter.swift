import Foundation
import Hummingbird
import NIOCore

/// Writes JSON straight into bytes, for answers on hot routes, where Foundation's `JSONEncoder`
/// cost more than answering the question.
///
/// It only writes what it is told: callers give keys in sorted order, as an encoder with
/// `.sortedKeys` would, and the types written keep their `Encodable` conformance, which tests use
/// as the reference that this writer must agree with. A type whose members are listed once for
/// both (``JSONObject``) cannot disagree with itself.
///
/// Its methods are inlinable: a caller in another module writes an answer as if the writer were
/// its own code, not through a call for every key and value.
public struct JSONWriter: ~Copyable {
    /// Bytes so far, in one allocation the writer grows itself. Not a `ByteBuffer`: NIO's buffer
    /// checks capacity, uniqueness and exclusive access on every write, and JSON is written a few
    /// bytes at a time (that was 60 % of the nearby route's instructions); not an array either, whose
    /// uniqueness check on every append cost the nearby route another 5 %. Copied into one buffer
    /// at the end.
    @usableFromInline var out: Bytes
    /// Bit *d* set: the container at depth *d* already holds a value, so the next one needs a comma.
    @usableFromInline var filled: UInt64 = 0
    @usableFromInline var depth = 0
    @usableFromInline var afterKey = false

    @inlinable public init(capacity: Int = 512) {
        self.out = Bytes(capacity: capacity)
    }

    @inlinable public mutating func beginObject() { self.open(UInt8(ascii: "{")) }
    @inlinable public mutating func endObject() { self.close(UInt8(ascii: "}")) }
    @inlinable public mutating func beginArray() { self.open(UInt8(ascii: "[")) }
    @inlinable public mutating func endArray() { self.close(UInt8(ascii: "]")) }

    /// An object member's key; the next call writes its value.
    @inlinable public mutating func key(_ name: StaticString) {
        self.separate()
        name.withUTF8Buffer { self.out.append(quoted: $0, then: UInt8(ascii: ":")) }
        self.afterKey = true
    }

    @inlinable public mutating func string(_ value: String) {
        self.separate()
        self.fragment(string: value)
    }

    // MARK: Members a value may lack

    // Nothing is written for a missing value, as `JSONEncoder` writes a synthesized `Encodable`'s
    // optional properties (`encodeIfPresent`).

    @inlinable public mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(name)
        self.string(value)
    }

    @inlinable public mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        self.key(name)
        self.number(Int64(value))
    }

    /// A finite number (``number(_:)-(Double)``).
    @inlinable public mutating func member(_ name: StaticString, _ value: Double?) {
        guard let value else { return }
        self.key(name)
        self.number(value)
    }

    @inlinable public mutating func member(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        self.key(name)
        self.bool(value)
    }

    @inlinable public mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        self.key(name)
        self.date(value)
    }

    /// A string written in pieces: ``beginString()``, any ``stringContent(_:)``, ``endString()``.
    @inlinable public mutating func beginString() {
        self.separate()
        self.out.append(UInt8(ascii: "\""))
    }

    @inlinable public mutating func endString() {
        self.out.append(UInt8(ascii: "\""))
    }

    /// Part of a string, escaped.
    @inlinable public mutating func stringContent(_ value: String) {
        var value = value
        value.withUTF8 { self.stringContent($0) }
    }

    /// Part of a string, its UTF-8 bytes, escaped.
    @inlinable public mutating func stringContent(_ utf8: UnsafeBufferPointer<UInt8>) {
        // Most strings (names, ids) need no escape: found so a word at a time, copied whole.
        if !Self.needsEscaping(utf8) {
            self.out.append(contentsOf: utf8)
            return
        }
        var start = 0
        for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            self.out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
            switch byte {
            case UInt8(ascii: "\""): self.raw("\\\"")
            case UInt8(ascii: "\\"): self.raw("\\\\")
            case 0x0A: self.raw("\\n")
            case 0x0D: self.raw("\\r")
            case 0x09: self.raw("\\t")
            case 0x08: self.raw("\\b")
            case 0x0C: self.raw("\\f")
            default:
                self.raw("\\u00")
                self.out.append(Self.hexDigit(byte >> 4))
                self.out.append(Self.hexDigit(byte & 0xF))
            }
            start = i + 1
        }
        self.out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
    }

    /// Whether any byte of `utf8` is one JSON escapes: a control character, `"` or `\`.
    ///
    /// Eight bytes at a time: a byte of a word `x` is below `n` (≤ 128) if and only if
    /// `(x - n·0x0101…) & ~x & 0x8080…` is not zero; `"` and `\` are the zero bytes of `x` XOR
    /// that byte repeated (below 1). Bytes of multi-byte UTF-8 sequences (0x80 and up) are none of
    /// them. The last bytes of a string whose length is not a multiple of eight are read as the
    /// word ending with them, which overlaps the one before: bytes already checked are checked again.
    @inlinable public static func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        let n = utf8.count
        guard n >= 8 else {
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            return false
        }
        @inline(__always) func flagged(_ x: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let quote = x ^ (ones &* 0x22), backslash = x ^ (ones &* 0x5C)
            let below = (x &- ones &* 0x20) & ~x
            let quotes = (quote &- ones) & ~quote
            let backslashes = (backslash &- ones) & ~backslash
            return (below | quotes | backslashes) & highs != 0
        }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= n {
            if flagged(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
            i += 8
        }
        return i < n && flagged(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
    }

    /// Part of a string that needs no escaping (a literal of the caller's).
    @inlinable public mutating func stringContent(_ text: StaticString) {
        self.raw(text)
    }

    /// What has been written so far, read in place.
    @inlinable public func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        self.out.withBytes(body)
    }

    /// What has been written, for a fragment written once and put into many answers.
    @inlinable public var bytes: [UInt8] { Array(self.buffer.readableBytesView) }

    /// The JSON written so far, in one buffer.
    @inlinable public var buffer: ByteBuffer { self.out.buffer }

    @inline(__always)
    @inlinable mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { self.out.append(contentsOf: $0) }
    }

    @inlinable static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// A finite number: integral values without a fraction, others in Swift's shortest round-trip form.
    @inlinable public mutating func number(_ value: Double) {
        self.separate()
        self.fragment(number: value)
    }

    // MARK: Values written in fragments

    /// Starts a value the caller writes whole in fragments (the `fragment` calls), for the parts of
    /// an answer written many times over with the same shape: keys, punctuation and values come
    /// as runs of bytes instead of one call and one separator check each. Writes the separator
    /// alone; the fragments must add up to one JSON value, keys in sorted order.
    @inlinable public mutating func beginFragments() {
        self.separate()
    }

    /// JSON text, as it is.
    @inlinable public mutating func fragment(_ text: StaticString) {
        self.raw(text)
    }

    /// JSON text written before (another writer's ``bytes``), as it is, read in place.
    @inlinable public mutating func fragment(_ written: Slice<UnsafeBufferPointer<UInt8>>) {
        self.out.append(contentsOf: UnsafeBufferPointer(rebasing: written))
    }

    /// A string, quoted and escaped (``JSONRun/string(_:)``).
    @inlinable public mutating func fragment(string value: String) {
        self.part(within: JSONRun.stringBound(value)) { $0.string(value) }
    }

    /// Writes a value the caller builds whole, like the `fragment` calls, through `body` into room
    /// made once for at most `bound` bytes (``JSONRun``): no check of the room, and no count kept,
    /// for each of its parts. Writes the separator first. Traps if `body` wrote more than `bound`
    /// (it must not: the caller's bound counts every part at its longest).
    @inlinable public mutating func run(within bound: Int, _ body: (inout JSONRun) -> Void) {
        self.separate()
        self.part(within: bound, body)
    }

    /// Writes through `body` into room for at most `bound` bytes; traps if it wrote more.
    @inlinable mutating func part(within bound: Int, _ body: (inout JSONRun) -> Void) {
        self.out.withRoom(bound) { start in
            var run = JSONRun(at: start)
            body(&run)
            let written = run.at - start
            precondition(written <= bound, "a JSON run wrote \(written) bytes in room for \(bound)")
            return written
        }
    }

    @inlinable public mutating func fragment(decimal value: Int64) {
        self.part(within: JSONRun.decimalBound) { $0.decimal(value) }
    }

    /// A finite number, as ``number(_:)-(Double)`` writes it.
    @inlinable public mutating func fragment(number value: Double) {
        self.part(within: JSONRun.numberBound) { $0.number(value) }
    }

    @inlinable public mutating func number(_ value: Int64) {
        self.separate()
        self.fragment(decimal: value)
    }

    /// A time as the shared encoder's `.iso8601` strategy writes it: UTC, whole seconds rounded
    /// down. Times from 1970 to 9999 are formatted here (Foundation's formatter cost more than the
    /// rest of a fix answer), others by Foundation, whose calendar turns Julian before 1582.
    @inlinable public mutating func date(_ value: Date) {
        let t = value.timeIntervalSince1970
        guard t >= 0, t < 253_402_300_800 else {
            self.string(value.formatted(.iso8601))
            return
        }
        let seconds = Int(t.rounded(.down))
        // Days to a proleptic Gregorian date (Howard Hinnant's civil_from_days).
        let z = seconds / 86_400 + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let secondOfDay = seconds % 86_400
        self.separate()
        self.out.append(UInt8(ascii: "\""))
        self.digits(year, 4)
        self.out.append(UInt8(ascii: "-"))
        self.digits(month, 2)
        self.out.append(UInt8(ascii: "-"))
        self.digits(day, 2)
        self.out.append(UInt8(ascii: "T"))
        self.digits(secondOfDay / 3600, 2)
        self.out.append(UInt8(ascii: ":"))
        self.digits(secondOfDay / 60 % 60, 2)
        self.out.append(UInt8(ascii: ":"))
        self.digits(secondOfDay % 60, 2)
        self.raw("Z\"")
    }

    /// `value` (0 ≤ value < 10^count) in exactly `count` decimal digits.
    @inlinable mutating func digits(_ value: Int, _ count: Int) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            self.out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    @inlinable public mutating func bool(_ value: Bool) {
        self.separate()
        self.raw(value ? "true" : "false")
    }

    @inlinable public mutating func null() {
        self.separate()
        self.raw("null")
    }

    @inlinable mutating func open(_ byte: UInt8) {
        self.separate()
        self.out.append(byte)
        self.depth += 1
        precondition(self.depth < 64, "JSON nested too deeply")
        self.filled &= ~(1 << UInt64(self.depth))
    }

    @inlinable mutating func close(_ byte: UInt8) {
        self.out.append(byte)
        self.depth -= 1
    }

    /// Before a key or a value: a comma if the container already holds something.
    @inlinable mutating func separate() {
        if self.afterKey {
            self.afterKey = false
            return
        }
        let bit: UInt64 = 1 << UInt64(self.depth)
        if self.filled & bit != 0 { self.out.append(UInt8(ascii: ",")) }
        self.filled |= bit
    }
}

/// Writes into room a ``JSONWriter`` made for it (``JSONWriter/run(within:_:)``), each part at the
/// next address, unchecked.
public struct JSONRun {
    @usableFromInline var at: UnsafeMutablePointer<UInt8>

    @inlinable init(at: UnsafeMutablePointer<UInt8>) {
        self.at = at
    }

    /// The longest ``number(_:)`` writes (Swift's shortest form of a double is at most 24 bytes).
    public static let numberBound = 32
    /// The longest ``decimal(_:)`` writes: a sign and 19 digits.
    public static let decimalBound = 20

    /// The longest ``string(_:)`` writes for `value`: its quotes, and every byte escaped as `\u00XX`.
    @inlinable public static func stringBound(_ value: String) -> Int { 2 + 6 * value.utf8.count }

    @inline(__always) @inlinable public mutating func raw(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        copy(text.utf8Start, n, to: self.at)
        self.at += n
    }

    @inline(__always) @inlinable public mutating func raw(_ written: Slice<UnsafeBufferPointer<UInt8>>) {
        guard let base = written.base.baseAddress else { return }
        copy(base + written.startIndex, written.count, to: self.at)
        self.at += written.count
    }

    @inline(__always) @inlinable public mutating func byte(_ value: UInt8) {
        self.at.pointee = value
        self.at += 1
    }

    /// An integer in decimal, from its last digit back.
    @inlinable public mutating func decimal(_ value: Int64) {
        if value < 0 { self.byte(UInt8(ascii: "-")) }
        var rest = value.magnitude
        // Ids, ages and distances have a few digits: counted by comparison, not by division.
        var digits = rest < 10 ? 1 : rest < 100 ? 2 : rest < 1_000 ? 3 : rest < 10_000 ? 4 : rest < 100_000 ? 5 : rest < 1_000_000 ? 6 : 7
        var t = rest / 10_000_000
        while t > 0 {
            t /= 10
            digits += 1
        }
        self.at += digits
        var end = self.at
        repeat {
            end -= 1
            end.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while rest > 0
    }

    /// A finite number, as ``JSONWriter/number(_:)-(Double)`` writes it.
    @inlinable public mutating func number(_ value: Double) {
        if value == 0 {
            if value.sign == .minus { self.raw("-0") } else { self.raw("0") }
        } else if value.rounded() == value, abs(value) <= 9_007_199_254_740_992 {
            self.decimal(Int64(value))
        } else {
            var text = value.description
            text.withUTF8 { utf8 in
                copy(utf8.baseAddress!, utf8.count, to: self.at)
                self.at += utf8.count
            }
        }
    }

    /// A string, quoted and escaped as ``JSONWriter/string(_:)`` writes it.
    @inlinable public mutating func string(_ value: String) {
        self.byte(UInt8(ascii: "\""))
        // Its bytes read where they are (not through a copy of the string, which counts a reference).
        if value.utf8.withContiguousStorageIfAvailable({ self.content($0) }) == nil {
            var value = value
            value.withUTF8 { self.content($0) }
        }
        self.byte(UInt8(ascii: "\""))
    }

    @inlinable mutating func content(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard JSONWriter.needsEscaping(utf8) else {
            if let base = utf8.baseAddress { copy(base, utf8.count, to: self.at) }
            self.at += utf8.count
            return
        }
        var escaped = JSONWriter(capacity: 6 * utf8.count)
        escaped.stringContent(utf8)
        escaped.withBytes { bytes in
            if let base = bytes.baseAddress { copy(base, bytes.count, to: self.at) }
            self.at += bytes.count
        }
    }
}

/// Copies `n` bytes: up to 16 in two words (or fewer, overlapping), not by a call to `memmove`,
/// which cost more than the copy for so few bytes (a sixth of the nearby answer's writing in
/// `perf`). The ranges must not overlap.
@inlinable @inline(__always)
func copy(_ source: UnsafePointer<UInt8>, _ n: Int, to destination: UnsafeMutablePointer<UInt8>) {
    let to = UnsafeMutableRawPointer(destination), from = UnsafeRawPointer(source)
    switch n {
    case 8...16:
        let head = from.loadUnaligned(as: UInt64.self), tail = from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        to.storeBytes(of: head, as: UInt64.self)
        to.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
    case 4..<8:
        let head = from.loadUnaligned(as: UInt32.self), tail = from.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        to.storeBytes(of: head, as: UInt32.self)
        to.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
    case 0..<4:
        for i in 0..<n { destination[i] = source[i] }
    default:
        to.copyMemory(from: from, byteCount: n)
    }
}

/// A growing run of bytes in one allocation, freed with the writer.
@usableFromInline
struct Bytes: ~Copyable {
    @usableFromInline var start: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var count = 0

    @inlinable init(capacity: Int) {
        self.capacity = max(64, capacity)
        self.start = .allocate(capacity: self.capacity)
    }

    // Inlinable like the rest: the optimiser inlines it into the writer's inlinable code, and an
    // -O build of this module crashed the compiler ("inlining a resilient function into a fragile
    // function") while it was not.
    @inlinable deinit { self.start.deallocate() }

    @inline(__always) @inlinable mutating func reserve(_ more: Int) {
        if self.count + more > self.capacity { self.grow(to: self.count + more) }
    }

    @usableFromInline mutating func grow(to needed: Int) {
        var capacity = self.capacity * 2
        while capacity < needed { capacity *= 2 }
        let start = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        start.initialize(from: self.start, count: self.count)
        self.start.deallocate()
        self.start = start
        self.capacity = capacity
    }

    @inline(__always) @inlinable mutating func append(_ byte: UInt8) {
        self.reserve(1)
        self.start[self.count] = byte
        self.count += 1
    }

    /// `"text"` and then `suffix`, with one check of the capacity.
    @inline(__always) @inlinable mutating func append(quoted text: UnsafeBufferPointer<UInt8>, then suffix: UInt8) {
        self.reserve(text.count + 3)
        let at = self.start + self.count
        at[0] = UInt8(ascii: "\"")
        if let base = text.baseAddress { (at + 1).initialize(from: base, count: text.count) }
        at[text.count + 1] = UInt8(ascii: "\"")
        at[text.count + 2] = suffix
        self.count += text.count + 3
    }

    /// Most runs an answer is written in are keys, punctuation and short names (see ``copy``).
    @inline(__always)
    @inlinable mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        self.reserve(bytes.count)
        copy(base, bytes.count, to: self.start + self.count)
        self.count += bytes.count
    }

    /// Makes room for `bound` bytes and lets `body` write them from their start; `body` says how
    /// many it wrote.
    @inline(__always)
    @inlinable mutating func withRoom(_ bound: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        self.reserve(bound)
        self.count += body(self.start + self.count)
    }

    @inlinable func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        body(UnsafeBufferPointer(start: self.start, count: self.count))
    }

    @inlinable var buffer: ByteBuffer { ByteBuffer(bytes: UnsafeBufferPointer(start: self.start, count: self.count)) }
}

/// An answer that writes its own JSON (see ``JSONWriter``).
public protocol JSONWritable: ResponseGenerator {
    func write(to json: inout JSONWriter)
    /// Bytes to make room for at the start: about the answer's length, so that a long one is not
    /// copied to a larger allocation several times on the way.
    var jsonCapacity: Int { get }
}

extension JSONWritable {
    @inlinable public var jsonCapacity: Int { 512 }

    /// The JSON bytes alone.
    @inlinable public var jsonBuffer: ByteBuffer {
        var json = JSONWriter(capacity: self.jsonCapacity)
        self.write(to: &json)
        return json.buffer
    }

    @inlinable public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: self.jsonBuffer))
    }
}
