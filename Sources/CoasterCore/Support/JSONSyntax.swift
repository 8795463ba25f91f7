import Foundation

/// What RFC 8259 forbids that Foundation's JSON parser lets through: a comma before the `}` or
/// `]` that closes an object or array (`{"minutes":5,}`), and a name given twice in one object
/// (`{"minutes":5,"minutes":500}`, of which `JSONDecoder` keeps the first and most other parsers
/// the last — a body two programs would read two ways). Every body the service reads as JSON is
/// held to both (``JSONValue/strict(_:)`` and the API's decoder), so what it accepts is JSON.
///
/// The scan is one pass over the bytes, with a stack of the open objects' names. It judges only
/// these two things: on bytes that are not JSON in other ways its answer means nothing, so it is
/// asked about bodies Foundation has parsed.
public enum JSONSyntax {
    /// The first of the two faults, and where it is.
    public struct Laxity: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Kind: Hashable, Sendable {
            /// A comma before the byte that closes the container (`}` or `]`).
            case trailingComma(closing: Character)
            /// A name an object already has (unescaped, as the decoder compares names).
            case repeatedName(String)
        }

        public var kind: Kind
        /// Bytes before the fault (the comma, or the repeated name's opening quote): a character
        /// count from 0, as Foundation's own messages count.
        public var offset: Int

        public init(kind: Kind, offset: Int) {
            self.kind = kind
            self.offset = offset
        }

        public var description: String {
            switch self.kind {
            case .trailingComma(let closing): "a comma before the \(closing) at character \(self.offset)"
            case .repeatedName(let name): "the name \"\(name.prefix(64))\" twice in one object, again at character \(self.offset)"
            }
        }
    }

    /// The first laxity of `data`, or `nil`.
    public static func laxity(in data: Data) -> Laxity? {
        data.withUnsafeBytes { Self.laxity(in: $0) }
    }

    /// The first laxity of `bytes`, or `nil`.
    public static func laxity(in bytes: UnsafeRawBufferPointer) -> Laxity? {
        // The open containers: an object's names so far (nil for an array), and whether a name comes next.
        var open: [(names: Set<String>?, nameNext: Bool)] = []
        var comma: Int?
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                i += 1
                continue
            case UInt8(ascii: "{"):
                open.append((names: [], nameNext: true))
            case UInt8(ascii: "["):
                open.append((names: nil, nameNext: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let comma { return Laxity(kind: .trailingComma(closing: Character(UnicodeScalar(byte))), offset: comma) }
                if !open.isEmpty { open.removeLast() }
            case UInt8(ascii: ","):
                comma = i
                if !open.isEmpty, open[open.count - 1].names != nil { open[open.count - 1].nameNext = true }
                i += 1
                continue
            case UInt8(ascii: "\""):
                let start = i
                var escaped = false
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\") { escaped = true; i += 1 }
                    i += 1
                }
                if let top = open.indices.last, open[top].nameNext {
                    open[top].nameNext = false
                    let name = Self.string(UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<min(i, bytes.count)]), escaped: escaped)
                    if open[top].names!.insert(name).inserted == false { return Laxity(kind: .repeatedName(name), offset: start) }
                }
            default:
                // A number, a literal, a colon (or bytes Foundation has already refused).
                break
            }
            comma = nil
            i += 1
        }
        return nil
    }

    /// A JSON string's contents (between its quotes) as the text it stands for.
    private static func string(_ raw: UnsafeRawBufferPointer, escaped: Bool) -> String {
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        func hex(_ at: Int) -> UInt32? {
            guard at + 4 <= raw.count else { return nil }
            return UInt32(String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<(at + 4)]), as: UTF8.self), radix: 16)
        }
        var i = 0
        while i < raw.count {
            guard raw[i] == UInt8(ascii: "\\"), i + 1 < raw.count else {
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
                guard var code = hex(i) else { continue }
                i += 4
                // A surrogate pair written as two escapes is one character.
                if (0xD800..<0xDC00).contains(code), i + 6 <= raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u"),
                   let low = hex(i + 2), (0xDC00..<0xE000).contains(low) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
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
