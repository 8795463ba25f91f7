import CoasterCore
import Foundation

/// One fix in `POST /v1/fixes`: a JSON object, or an array of them.
struct FixWire: Decodable, Sendable {
    /// Degrees.
    var lat: Double
    var lon: Double
    /// Metres.
    var accuracy: Double?
    var recordedAt: Date
    /// Metres per second.
    var speed: Double?
    /// Metres.
    var altitude: Double?
    /// The client's id for the fix, making retries idempotent.
    var id: String?

    var fix: IncomingFix {
        IncomingFix(clientID: self.id, lat: self.lat, lon: self.lon, accuracy: self.accuracy, recordedAt: self.recordedAt,
                    speed: self.speed, altitude: self.altitude)
    }
}

extension FixWire {
    /// The fixes of a `POST /v1/fixes` body as `JSONDecoder` reads it: an array of fix objects if
    /// it starts with `[`, else one. Throws the decoder's error, which says where the body is wrong.
    static func fixes(decoding body: Data) throws -> [IncomingFix] {
        if body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[") {
            return try JSONDecoding.decode([FixWire].self, from: body).map(\.fix)
        }
        return [try JSONDecoding.decode(FixWire.self, from: body).fix]
    }
}

/// The usual `POST /v1/fixes` body read straight from its bytes: Foundation's `JSONDecoder` was a
/// fifth of a one-fix request's time on the event loop (tools/bench/README.md).
///
/// It reads only the plain shape clients send — a fix object or an array of them, members the
/// route knows, each once, strings without escapes — and says `nil` for anything else (an escape,
/// a `null`, another member, a repeated one, anything that is not JSON). The caller then decodes
/// the body with `JSONDecoder` (``FixWire/fixes(decoding:)``), which accepts it or names
/// what is wrong where, so every answer stays the decoder's. `FixBodyTests` holds the two to the
/// same fixes over hand-picked and randomly broken bodies.
enum FixBody {
    /// The fixes of `bytes`, or `nil` to leave the body to the decoder.
    static func fixes(_ bytes: UnsafeRawBufferPointer) -> [IncomingFix]? {
        var reader = Reader(bytes)
        reader.skipSpace()
        var fixes: [IncomingFix] = []
        if reader.take(UInt8(ascii: "[")) {
            reader.skipSpace()
            if !reader.take(UInt8(ascii: "]")) {
                repeat {
                    reader.skipSpace()
                    guard let fix = reader.fix() else { return nil }
                    fixes.append(fix)
                    reader.skipSpace()
                } while reader.take(UInt8(ascii: ","))
                guard reader.take(UInt8(ascii: "]")) else { return nil }
            }
        } else {
            guard let fix = reader.fix() else { return nil }
            fixes.append(fix)
        }
        reader.skipSpace()
        return reader.atEnd ? fixes : nil
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { self.at == self.bytes.count }

        /// The next byte, 0 at the end (never valid where a byte is looked for).
        var next: UInt8 { self.at < self.bytes.count ? self.bytes[self.at] : 0 }

        mutating func take(_ byte: UInt8) -> Bool {
            guard self.next == byte else { return false }
            self.at += 1
            return true
        }

        /// JSON's whitespace: space, tab, line feed, carriage return.
        mutating func skipSpace() {
            while self.at < self.bytes.count {
                switch self.bytes[self.at] {
                case 0x20, 0x09, 0x0A, 0x0D: self.at += 1
                default: return
                }
            }
        }

        /// A fix's number members, in the order ``fix()`` keeps their values.
        static let numberMembers: [StaticString] = ["lat", "lon", "accuracy", "speed", "altitude"]

        /// One fix object with `lat`, `lon` and `recordedAt`, and any of `accuracy`, `speed`,
        /// `altitude` and `id`.
        mutating func fix() -> IncomingFix? {
            guard self.take(UInt8(ascii: "{")) else { return nil }
            // The numbers by ``numberMembers``; NaN until read (a number read is finite).
            var numbers = SIMD8<Double>(repeating: .nan)
            var recordedAt: Date?, id: String?
            repeat {
                self.skipSpace()
                guard let key = self.plainString() else { return nil }
                self.skipSpace()
                guard self.take(UInt8(ascii: ":")) else { return nil }
                self.skipSpace()
                if let n = Self.numberMembers.firstIndex(where: { Self.equal(key, $0) }) {
                    guard numbers[n].isNaN, let value = self.number() else { return nil }
                    numbers[n] = value
                } else if Self.equal(key, "recordedAt") {
                    guard recordedAt == nil, let text = self.plainString().flatMap(Self.text), let date = RFC3339.date(text) else { return nil }
                    recordedAt = date
                } else if Self.equal(key, "id") {
                    guard id == nil, let text = self.plainString().flatMap(Self.text) else { return nil }
                    id = text
                } else {
                    return nil
                }
                self.skipSpace()
            } while self.take(UInt8(ascii: ","))
            guard self.take(UInt8(ascii: "}")), !numbers[0].isNaN, !numbers[1].isNaN, let recordedAt else { return nil }
            func optional(_ n: Int) -> Double? { numbers[n].isNaN ? nil : numbers[n] }
            return IncomingFix(clientID: id, lat: numbers[0], lon: numbers[1], accuracy: optional(2), recordedAt: recordedAt,
                               speed: optional(3), altitude: optional(4))
        }

        /// A string's bytes between its quotes, if it has no escape and no control character.
        mutating func plainString() -> UnsafeRawBufferPointer? {
            guard self.take(UInt8(ascii: "\"")) else { return nil }
            let start = self.at
            while self.at < self.bytes.count {
                let byte = self.bytes[self.at]
                if byte == UInt8(ascii: "\"") {
                    defer { self.at += 1 }
                    return UnsafeRawBufferPointer(rebasing: self.bytes[start..<self.at])
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                self.at += 1
            }
            return nil
        }

        /// A number in JSON's grammar (`-`, digits without a leading zero, a fraction, an
        /// exponent), as a finite `Double`.
        mutating func number() -> Double? {
            let start = self.at
            _ = self.take(UInt8(ascii: "-"))
            if !self.take(UInt8(ascii: "0")) {
                guard self.digits() else { return nil }
            }
            if self.take(UInt8(ascii: ".")) {
                guard self.digits() else { return nil }
            }
            var exponentDigits = 0
            if self.take(UInt8(ascii: "e")) || self.take(UInt8(ascii: "E")) {
                if !self.take(UInt8(ascii: "+")) { _ = self.take(UInt8(ascii: "-")) }
                let digits = self.at
                guard self.digits() else { return nil }
                exponentDigits = self.at - digits
            }
            // A short decimal is read without the C library, to the same value (``ShortDecimal``).
            if exponentDigits == 0,
               let value = UnsafeRawBufferPointer(rebasing: self.bytes[start..<self.at]).withMemoryRebound(to: UInt8.self, ShortDecimal.parse) {
                return value
            }
            // Correctly rounded, as the decoder's: both parse with the C library's `strtod`.
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: self.bytes[start..<self.at]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { return nil }
            // Exponents of four digits and more, zero with an exponent, and numbers too small for a
            // `Double` (which it takes as 0) are the decoder's to judge: it refuses some that
            // `Double` reads (the fuzz target found 1.5e-7777…3 read as 0 here and refused there;
            // the decoder also refuses 0.000e5).
            if exponentDigits > 3 { return nil }
            if value == 0, exponentDigits > 0 || text.utf8.contains(where: { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) {
                return nil
            }
            return value
        }

        /// One or more decimal digits.
        mutating func digits() -> Bool {
            let start = self.at
            while self.at < self.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[self.at]) { self.at += 1 }
            return self.at > start
        }

        static func equal(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
            bytes.count == name.utf8CodeUnitCount && memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0
        }

        /// Valid UTF-8 as a string (the decoder refuses the rest).
        static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
            String(validating: bytes, as: UTF8.self)
        }
    }
}
