@testable import CoasterHTTP
import Foundation
import NIOCore
import Testing

/// What ``JSONWriter`` writes is byte for byte what `JSONEncoder` writes of the same values, with
/// the settings a service encodes its answers with: RFC 3339 times, sorted keys, `/` unescaped.
@Suite("JSON writer")
struct JSONWriterTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    func agree(_ value: some Encodable & JSONWritable) throws {
        let reference = try Self.encoder.encode(value)
        let written = Data(value.jsonBuffer.readableBytesView)
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: reference, as: UTF8.self))
    }

    /// Dates as the shared encoder writes them: whole seconds rounded down, every day of the
    /// calendar from 1970 to 9999, and Foundation's own answer outside that.
    @Test func datesAgree() throws {
        var generator = SplitMix(seed: 20_261_122)
        var times: [Double] = [0, 0.999, 59.5, 86_399.9, 951_782_400, 4_107_542_400, 253_402_300_799.9, 253_402_300_800, -0.5, -86_400 * 366]
        times += (0..<2_000).map { _ in Double.random(in: 0..<253_402_300_800, using: &generator) }
        times += (0..<2_000).map { _ in Double.random(in: 1_700_000_000..<1_900_000_000, using: &generator) }
        for t in times {
            let date = Date(timeIntervalSince1970: t)
            var json = JSONWriter()
            json.date(date)
            let reference = try Self.encoder.encode(date)
            #expect(String(buffer: json.buffer) == String(decoding: reference, as: UTF8.self), "at \(t)")
        }
    }

    /// Strings of every length up to 40, most with nothing to escape and some with one or a few
    /// bytes that need it anywhere (the word-at-a-time check reads eight bytes at a time and the
    /// last eight again): escaped as the encoder escapes them, byte for byte.
    @Test func stringsAgree() throws {
        struct Strings: Encodable, JSONWritable {
            var strings: [String]
            func write(to json: inout JSONWriter) {
                json.beginObject()
                json.key("strings"); json.beginArray()
                for s in self.strings { json.string(s) }
                json.endArray()
                json.endObject()
            }
        }
        let plain: [Character] = Array("abcXYZ019 -_./~'`{}é€😀\u{7F}")
        let escaped: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{C}", "\u{1F}"]
        var g = SplitMix(seed: 22)
        var strings: [String] = []
        for length in 0...40 {
            for trial in 0..<40 {
                var characters = (0..<length).map { _ in plain.randomElement(using: &g)! }
                if trial % 2 == 1, length > 0 {
                    for _ in 0..<Int.random(in: 1...3, using: &g) {
                        characters[Int.random(in: 0..<length, using: &g)] = escaped.randomElement(using: &g)!
                    }
                }
                strings.append(String(characters))
            }
        }
        try self.agree(Strings(strings: strings))
        for string in strings {
            var s = string
            let naive = s.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            #expect(s.withUTF8(JSONWriter.needsEscaping) == naive, "\(string.debugDescription)")
        }
    }

    /// Integers are written digit by digit, integral doubles as integers: both as the encoder does,
    /// at the extremes too.
    @Test func numbersAgree() throws {
        struct Numbers: Encodable, JSONWritable {
            var integers: [Int64]
            var doubles: [Double]
            func write(to json: inout JSONWriter) {
                json.beginObject()
                json.key("doubles"); json.beginArray()
                for d in self.doubles { json.number(d) }
                json.endArray()
                json.key("integers"); json.beginArray()
                for i in self.integers { json.number(i) }
                json.endArray()
                json.endObject()
            }
        }
        var g = SplitMix(seed: 7)
        let integers: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_000_000_007, .max, .min, .max - 1, .min + 1]
            + (0..<200).map { _ in Int64.random(in: .min ... .max, using: &g) >> Int64.random(in: 0...63, using: &g) }
        let doubles: [Double] = [0, -0.0, 1, -1, 10, 500, 2_500, 0.5, 12.5, -3.25, 9_007_199_254_740_991, 9_007_199_254_740_992, -9_007_199_254_740_992, 9_007_199_254_740_994, 1e17, 1e300, .leastNonzeroMagnitude]
            + (0..<200).map { _ in (Double.random(in: -1e6...1e6, using: &g) * 4).rounded() / 4 }
        try self.agree(Numbers(integers: integers, doubles: doubles))
    }
}

/// A repeatable generator (SplitMix64), for tables of random cases that are the same every run.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
