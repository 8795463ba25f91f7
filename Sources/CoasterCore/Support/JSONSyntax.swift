import Foundation

/// RFC 8259 JSON, judged byte by byte, so that a body or file that is not JSON is refused with
/// what is wrong and exactly where: Foundation's `JSONDecoder` says only "The given data was not
/// valid JSON.", and its parser lets through two things RFC 8259 forbids — a comma before the `}`
/// or `]` that closes an object or array (`{"minutes":5,}`), and a name given twice in one object
/// (`{"minutes":5,"minutes":500}`, of which `JSONDecoder` keeps the first and most other parsers
/// the last: a body two programs would read two ways). Every body the service reads as JSON is
/// held to it before Foundation reads it (``JSONValue/strict(_:)`` and the API's decoder).
///
/// One pass over the bytes, without recursion: the open arrays and objects are an explicit stack,
/// at most ``maximumDepth`` deep, and every byte is looked at a bounded number of times, so any
/// input costs time linear in its length. Beyond RFC 8259 it refuses only numbers a `Double`
/// cannot hold (`1e400`, and `1e-400`, which would read as 0), as Foundation's decoder does; it
/// skips a UTF-8 byte order mark at the start, which RFC 8259 §8.1 lets a parser ignore.
public enum JSONSyntax {
    /// The most arrays and objects open at once: Foundation's parsers (`JSONDecoder` and
    /// `JSONSerialization`) refuse deeper documents, so a limit of ours any lower would refuse JSON
    /// they read, and any higher would pass documents they then refuse without saying where.
    public static let maximumDepth = 512

    /// The first thing that makes bytes no JSON, and where it is.
    public struct Fault: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Kind: Hashable, Sendable {
            /// A byte where none of its kind may be (shown as `'x'`, or `0x00` if not printable ASCII).
            case unexpectedByte(UInt8)
            /// The bytes end inside a value, or before there is one.
            case unexpectedEnd
            /// A byte below 0x20 in a string, where it must be written as an escape.
            case controlCharacter(UInt8)
            /// A backslash followed by a byte that begins no escape.
            case invalidEscape(UInt8)
            /// `\u` not followed by four hexadecimal digits.
            case invalidUnicodeEscape
            /// A `\u` escape of one half of a surrogate pair without the other half.
            case loneSurrogate(UInt16)
            /// Bytes that are not UTF-8 (a stray continuation byte, an overlong or cut sequence, a
            /// surrogate, a code point above U+10FFFF).
            case invalidUTF8
            /// A number not in JSON's grammar (`-`, `1.`, `1e+`, `.5`).
            case malformedNumber
            /// A number that a `Double` cannot hold: its magnitude overflows, or it is not zero but
            /// would read as zero (the text, at most 40 bytes of it).
            case numberOutOfRange(String)
            /// A comma before the byte that closes the container (`}` or `]`).
            case trailingComma(closing: Character)
            /// A name its object already has, compared as the text it stands for (escapes decoded,
            /// as the decoder compares names).
            case repeatedName(String)
            /// An array or object opened inside ``maximumDepth`` others.
            case tooDeep
            /// A byte after the one value a document holds.
            case trailingBytes(UInt8)
        }

        public var kind: Kind
        /// Bytes before the fault, counted from 0 (for a repeated name, before its opening quote;
        /// for a malformed or out-of-range number, before its first byte).
        public var offset: Int
        /// The fault's line, from 1: line feeds before it, plus one.
        public var line: Int
        /// The fault's column, from 1, counted in characters (Unicode scalars, so `é` is one
        /// column though two bytes) since the line's start.
        public var column: Int

        public init(kind: Kind, offset: Int, line: Int, column: Int) {
            self.kind = kind
            self.offset = offset
            self.line = line
            self.column = column
        }

        /// The fault at `offset` of `bytes`, with its line and column counted there: once, for
        /// the fault, rather than for every line break of a body that is mostly fine.
        init(_ kind: Kind, at offset: Int, in bytes: UnsafeRawBufferPointer) {
            var line = 1
            var lineStart = JSONSyntax.startAfterByteOrderMark(bytes)
            for i in 0..<offset where bytes[i] == 0x0A {
                line += 1
                lineStart = i + 1
            }
            // Every character's first byte: all but UTF-8's continuation bytes (0b10xxxxxx).
            var column = 1
            for i in min(lineStart, offset)..<offset where bytes[i] & 0xC0 != 0x80 { column += 1 }
            self.init(kind: kind, offset: offset, line: line, column: column)
        }

        public var description: String {
            "\(self.reason) at byte \(self.offset) (line \(self.line), column \(self.column))"
        }

        /// What is wrong, without where.
        public var reason: String {
            switch self.kind {
            case .unexpectedByte(let byte): "unexpected \(Self.show(byte))"
            case .unexpectedEnd: "unexpected end of the body"
            case .controlCharacter(let byte): "a control character (\(Self.hex(byte))) in a string"
            case .invalidEscape(let byte): (0x21...0x7E).contains(byte) ? "an invalid escape \\\(Character(UnicodeScalar(byte)))"
                : "an invalid escape (\\ then \(Self.hex(byte)))"
            case .invalidUnicodeEscape: "a \\u escape without four hexadecimal digits"
            case .loneSurrogate(let unit): "a lone surrogate \\u\(String(unit, radix: 16, uppercase: true))"
            case .invalidUTF8: "invalid UTF-8"
            case .malformedNumber: "a malformed number"
            case .numberOutOfRange(let text): "the number \(text) is out of range"
            case .trailingComma(let closing): "a comma before the \(closing)"
            case .repeatedName(let name): "the name \"\(name.prefix(64))\" twice in one object, again"
            case .tooDeep: "more than \(JSONSyntax.maximumDepth) nested arrays and objects"
            case .trailingBytes(let byte): "unexpected \(Self.show(byte)) after the value"
            }
        }

        /// Printable ASCII in quotes, anything else as its hexadecimal value.
        private static func show(_ byte: UInt8) -> String {
            (0x21...0x7E).contains(byte) ? "'\(Character(UnicodeScalar(byte)))'" : "byte \(Self.hex(byte))"
        }

        private static func hex(_ byte: UInt8) -> String {
            "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }

    /// The first fault of `data`, or `nil` if it is JSON.
    public static func fault(in data: Data) -> Fault? {
        data.withUnsafeBytes { Self.fault(in: $0) }
    }

    /// The first fault of `bytes`, or `nil` if they are JSON.
    public static func fault(in bytes: UnsafeRawBufferPointer) -> Fault? {
        var scanner = Scanner(bytes)
        return scanner.run()
    }

    /// Where the JSON of `bytes` starts: past a UTF-8 byte order mark, if there is one.
    static func startAfterByteOrderMark(_ bytes: UnsafeRawBufferPointer) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// What may come next, as the grammar has it.
    private enum Expect {
        /// A value: the document's, or a member's after its colon.
        case value
        /// An array's first element, or the `]` that closes it empty.
        case firstElement
        /// An element after a comma.
        case element
        /// An object's first name, or the `}` that closes it empty.
        case firstName
        /// A name after a comma.
        case name
        case colon
        /// After an element or member: a comma, or the close of its container.
        case commaOrClose
        /// After the document's value: nothing but whitespace.
        case end
    }

    /// Where a name of an open object lies, between its quotes.
    private struct NameSpan {
        var start: Int
        var end: Int
        /// ASCII without escapes: its bytes are its text, so names compare as bytes.
        var plain: Bool
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var at: Int
        /// The open containers, innermost last: for an object, the index in ``names`` of its
        /// first name; for an array, -1.
        var open: [Int] = []
        /// The names of the open objects, each object's after its parent's. An object's first
        /// ``linearNames`` are compared one by one (cheaper than hashing for the few members most
        /// objects have); when it reaches that many they go into a set in ``large``, which takes
        /// the rest, so a large object costs time linear in its names too.
        var names: [NameSpan] = []
        /// The names of the open objects that have ``linearNames`` or more, by depth.
        var large: [Int: Set<String>] = [:]
        static let linearNames = 16

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            self.at = JSONSyntax.startAfterByteOrderMark(bytes)
            self.open.reserveCapacity(16)
        }

        func fault(_ kind: Fault.Kind, at offset: Int) -> Fault {
            Fault(kind, at: offset, in: self.bytes)
        }

        /// The byte at `at` as a fault: the end of the bytes, or an unexpected byte.
        func unexpected() -> Fault {
            self.at < self.bytes.count ? self.fault(.unexpectedByte(self.bytes[self.at]), at: self.at) : self.fault(.unexpectedEnd, at: self.at)
        }

        mutating func run() -> Fault? {
            let count = self.bytes.count
            var expect = Expect.value
            var lastComma = 0
            while true {
                while self.at < count, Self.isSpace(self.bytes[self.at]) { self.at += 1 }
                guard self.at < count else { return expect == .end ? nil : self.fault(.unexpectedEnd, at: count) }
                let byte = self.bytes[self.at]
                switch expect {
                case .end:
                    return self.fault(.trailingBytes(byte), at: self.at)
                case .colon:
                    guard byte == UInt8(ascii: ":") else { return self.unexpected() }
                    self.at += 1
                    expect = .value
                    continue
                case .commaOrClose:
                    let inObject = self.open[self.open.count - 1] >= 0
                    if byte == UInt8(ascii: ",") {
                        lastComma = self.at
                        self.at += 1
                        expect = inObject ? .name : .element
                    } else if byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        self.close()
                        expect = self.open.isEmpty ? .end : .commaOrClose
                    } else {
                        return self.unexpected()
                    }
                    continue
                case .firstName, .name:
                    if byte == UInt8(ascii: "\"") {
                        if let fault = self.name() { return fault }
                        expect = .colon
                    } else if byte == UInt8(ascii: "}") {
                        if expect == .name { return self.fault(.trailingComma(closing: "}"), at: lastComma) }
                        self.close()
                        expect = self.open.isEmpty ? .end : .commaOrClose
                    } else {
                        return self.unexpected()
                    }
                    continue
                case .value, .firstElement, .element:
                    if byte == UInt8(ascii: "]"), expect != .value {
                        if expect == .element { return self.fault(.trailingComma(closing: "]"), at: lastComma) }
                        self.close()
                        expect = self.open.isEmpty ? .end : .commaOrClose
                        continue
                    }
                }
                // A value.
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard self.open.count < JSONSyntax.maximumDepth else { return self.fault(.tooDeep, at: self.at) }
                    self.at += 1
                    if byte == UInt8(ascii: "{") {
                        self.open.append(self.names.count)
                        expect = .firstName
                    } else {
                        self.open.append(-1)
                        expect = .firstElement
                    }
                    continue
                case UInt8(ascii: "\""):
                    if case .failure(let fault) = self.string() { return fault }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    if let fault = self.number() { return fault }
                case UInt8(ascii: "t"):
                    if let fault = self.literal("true") { return fault }
                case UInt8(ascii: "f"):
                    if let fault = self.literal("false") { return fault }
                case UInt8(ascii: "n"):
                    if let fault = self.literal("null") { return fault }
                default:
                    return self.unexpected()
                }
                expect = self.open.isEmpty ? .end : .commaOrClose
            }
        }

        /// Past the `}` or `]` at `at`, which closes the innermost container.
        mutating func close() {
            self.at += 1
            let first = self.open.removeLast()
            guard first >= 0 else { return }
            if self.names.count - first == Self.linearNames { self.large[self.open.count] = nil }
            self.names.removeLast(self.names.count - first)
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        }

        static func isDigit(_ byte: UInt8) -> Bool {
            byte &- UInt8(ascii: "0") < 10
        }

        /// `true`, `false` or `null`, from its first byte.
        mutating func literal(_ word: StaticString) -> Fault? {
            let count = word.utf8CodeUnitCount
            for k in 0..<count {
                guard self.at < self.bytes.count, self.bytes[self.at] == word.utf8Start[k] else { return self.unexpected() }
                self.at += 1
            }
            return nil
        }

        /// A name, from its opening quote, which its object must not have yet.
        mutating func name() -> Fault? {
            let quote = self.at
            let span: NameSpan
            switch self.string() {
            case .failure(let fault): return fault
            case .success(let plain): span = NameSpan(start: quote + 1, end: self.at - 1, plain: plain)
            }
            let depth = self.open.count - 1
            let first = self.open[depth]
            guard self.names.count - first < Self.linearNames else {
                let text = self.text(span)
                return self.large[depth]!.insert(text).inserted ? nil : self.fault(.repeatedName(text), at: quote)
            }
            for other in self.names[first...] where self.same(other, span) {
                return self.fault(.repeatedName(self.text(span)), at: quote)
            }
            self.names.append(span)
            if self.names.count - first == Self.linearNames {
                self.large[depth] = Set(self.names[first...].map { self.text($0) })
            }
            return nil
        }

        /// Whether two names stand for the same text, as Swift compares strings (and so the
        /// decoder's dictionaries): canonically equivalent text is the same name, so only plain
        /// ASCII names compare as bytes.
        func same(_ a: NameSpan, _ b: NameSpan) -> Bool {
            if a.plain, b.plain {
                return a.end - a.start == b.end - b.start
                    && memcmp(self.bytes.baseAddress! + a.start, self.bytes.baseAddress! + b.start, a.end - a.start) == 0
            }
            return self.text(a) == self.text(b)
        }

        /// The text a name stands for.
        func text(_ span: NameSpan) -> String {
            let raw = UnsafeRawBufferPointer(rebasing: self.bytes[span.start..<span.end])
            return span.plain ? String(decoding: raw, as: UTF8.self) : JSONSyntax.unescaped(raw)
        }

        /// A string, from its opening quote to past its closing one; whether it is plain (ASCII
        /// without escapes).
        mutating func string() -> Result<Bool, Fault> {
            let count = self.bytes.count
            var plain = true
            self.at += 1
            while self.at < count {
                // Most bytes of most strings are plain ASCII: skipped in a loop of their own.
                var i = self.at
                var byte = self.bytes[i]
                while byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    i += 1
                    guard i < count else { return .failure(self.fault(.unexpectedEnd, at: count)) }
                    byte = self.bytes[i]
                }
                self.at = i
                switch byte {
                case UInt8(ascii: "\""):
                    self.at += 1
                    return .success(plain)
                case UInt8(ascii: "\\"):
                    plain = false
                    if let fault = self.escape() { return .failure(fault) }
                case 0x80...:
                    plain = false
                    if let fault = self.utf8() { return .failure(fault) }
                default:
                    return .failure(self.fault(.controlCharacter(byte), at: self.at))
                }
            }
            return .failure(self.fault(.unexpectedEnd, at: count))
        }

        /// One escape, from its backslash.
        mutating func escape() -> Fault? {
            let start = self.at
            guard start + 1 < self.bytes.count else { return self.fault(.unexpectedEnd, at: self.bytes.count) }
            let kind = self.bytes[start + 1]
            switch kind {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                self.at += 2
                return nil
            case UInt8(ascii: "u"):
                break
            default:
                return self.fault(.invalidEscape(kind), at: start)
            }
            let unit: UInt16
            switch self.hex4(at: start + 2) {
            case .failure(let fault): return fault
            case .success(let value): unit = value
            }
            self.at = start + 6
            switch unit {
            case 0xD800..<0xDC00:
                // A high surrogate stands for nothing without a low one escaped right after it.
                let count = self.bytes.count
                if self.at == count || self.at + 1 == count && self.bytes[self.at] == UInt8(ascii: "\\") {
                    return self.fault(.unexpectedEnd, at: count)
                }
                guard self.bytes[self.at] == UInt8(ascii: "\\"), self.bytes[self.at + 1] == UInt8(ascii: "u") else {
                    return self.fault(.loneSurrogate(unit), at: start)
                }
                switch self.hex4(at: self.at + 2) {
                case .failure(let fault): return fault
                case .success(0xDC00..<0xE000): self.at += 6
                case .success: return self.fault(.loneSurrogate(unit), at: start)
                }
            case 0xDC00..<0xE000:
                return self.fault(.loneSurrogate(unit), at: start)
            default:
                break
            }
            return nil
        }

        /// The four hexadecimal digits at `offset`, a `\u` escape's.
        func hex4(at offset: Int) -> Result<UInt16, Fault> {
            var value: UInt16 = 0
            for i in offset..<(offset + 4) {
                guard i < self.bytes.count else { return .failure(self.fault(.unexpectedEnd, at: self.bytes.count)) }
                let byte = self.bytes[i]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return .failure(self.fault(.invalidUnicodeEscape, at: offset - 2))
                }
                value = value << 4 | UInt16(digit)
            }
            return .success(value)
        }

        /// One character of two to four bytes, from its first (Unicode's table 3-7 of well-formed
        /// UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF).
        mutating func utf8() -> Fault? {
            let start = self.at
            let lead = self.bytes[start]
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; second = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; second = 0x80...0x9F
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; second = 0x80...0x8F
            default: return self.fault(.invalidUTF8, at: start)
            }
            for k in 1..<length {
                guard start + k < self.bytes.count else { return self.fault(.unexpectedEnd, at: self.bytes.count) }
                guard (k == 1 ? second : 0x80...0xBF).contains(self.bytes[start + k]) else { return self.fault(.invalidUTF8, at: start) }
            }
            self.at = start + length
            return nil
        }

        /// A number, from its first byte, in JSON's grammar and a `Double`'s range.
        mutating func number() -> Fault? {
            let count = self.bytes.count
            let start = self.at
            func digits() -> Int {
                let from = self.at
                while self.at < count, Self.isDigit(self.bytes[self.at]) { self.at += 1 }
                return self.at - from
            }
            /// A digit must come next: the end there is the body's, anything else the number's fault.
            func needDigit() -> Fault? {
                guard self.at < count else { return self.fault(.unexpectedEnd, at: count) }
                return Self.isDigit(self.bytes[self.at]) ? nil : self.fault(.malformedNumber, at: start)
            }
            if self.bytes[self.at] == UInt8(ascii: "-") {
                self.at += 1
                if let fault = needDigit() { return fault }
            }
            // The decimal exponent of the first significant digit, unless the number is zero.
            var magnitude: Int?
            if self.bytes[self.at] == UInt8(ascii: "0") {
                self.at += 1
            } else {
                magnitude = digits() - 1
            }
            if self.at < count, self.bytes[self.at] == UInt8(ascii: ".") {
                self.at += 1
                if let fault = needDigit() { return fault }
                let from = self.at
                _ = digits()
                if magnitude == nil, let first = (from..<self.at).first(where: { self.bytes[$0] != UInt8(ascii: "0") }) {
                    magnitude = from - first - 1
                }
            }
            if self.at < count, self.bytes[self.at] | 0x20 == UInt8(ascii: "e") {
                self.at += 1
                var negative = false
                if self.at < count, self.bytes[self.at] == UInt8(ascii: "+") || self.bytes[self.at] == UInt8(ascii: "-") {
                    negative = self.bytes[self.at] == UInt8(ascii: "-")
                    self.at += 1
                }
                if let fault = needDigit() { return fault }
                // Capped far above any count of digits in memory, so the cap never decides, and
                // the sum cannot overflow.
                var exponent = 0
                while self.at < count, Self.isDigit(self.bytes[self.at]) {
                    exponent = min(exponent * 10 + Int(self.bytes[self.at] - UInt8(ascii: "0")), 1 << 48)
                    self.at += 1
                }
                magnitude = magnitude.map { $0 + (negative ? -exponent : exponent) }
            }
            // A `Double` holds magnitudes from about 4.9e-324 to 1.8e308: only near the ends does
            // the exact value decide, and only there is the text read as a number.
            guard let magnitude, magnitude < -300 || magnitude > 300 else { return nil }
            let raw = UnsafeRawBufferPointer(rebasing: self.bytes[start..<self.at])
            let inRange: Bool
            if magnitude >= 309 || magnitude <= -325 {
                inRange = false
            } else {
                let value = Double(String(decoding: raw, as: UTF8.self)) ?? .infinity
                inRange = value.isFinite && value != 0
            }
            if inRange { return nil }
            let text = String(decoding: raw.prefix(40), as: UTF8.self) + (raw.count > 40 ? "…" : "")
            return self.fault(.numberOutOfRange(text), at: start)
        }
    }

    /// A JSON string's contents (between its quotes, with escapes already found valid) as the
    /// text it stands for.
    static func unescaped(_ raw: UnsafeRawBufferPointer) -> String {
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        func hex(_ at: Int) -> UInt32 {
            UInt32(String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<(at + 4)]), as: UTF8.self), radix: 16) ?? 0xFFFD
        }
        var i = 0
        while i < raw.count {
            guard raw[i] == UInt8(ascii: "\\") else {
                utf8.append(raw[i])
                i += 1
                continue
            }
            flush()
            let escape = raw[i + 1]
            i += 2
            switch escape {
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = hex(i)
                i += 4
                // A surrogate pair written as two escapes is one character (the scan saw the pair whole).
                if (0xD800..<0xDC00).contains(code) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (hex(i + 2) - 0xDC00)
                    i += 6
                }
                scalars.append(UnicodeScalar(code) ?? "\u{FFFD}")
            default:
                // \" \\ \/ stand for themselves.
                scalars.append(UnicodeScalar(escape))
            }
        }
        flush()
        return String(scalars)
    }
}
