@testable import CoasterAPI
import CoasterCore
import CoasterService
import Foundation
import Testing

/// `FixBody` reads the usual fix bodies without `JSONDecoder`, and leaves every other body to it:
/// whatever it reads, it must read as the decoder does, and what it leaves, the decoder answers.
@Suite("Fix bodies")
struct FixBodyTests {
    /// The decoder's reading of a body, the route's for what `FixBody` leaves (`nil` where it throws).
    static func decoded(_ body: [UInt8]) -> [IncomingFix]? { try? FixWire.fixes(decoding: Data(body)) }

    static func read(_ body: [UInt8]) -> [IncomingFix]? { body.withUnsafeBytes(FixBody.fixes) }

    /// What clients send: read, and read as the decoder reads it.
    static let plain: [String] = [
        #"{"lat":41.481656,"lon":-82.688132,"accuracy":5,"recordedAt":"2026-11-21T10:00:00Z"}"#,
        #"[{"lat":41.4816561,"lon":-82.6881320,"accuracy":8,"recordedAt":"2026-11-23T06:00:01.123456Z"}]"#,
        #"[{"lat":33.8121,"lon":-117.9190,"accuracy":12.5,"recordedAt":"2026-11-21T10:00:00Z","id":"a-1"},"#
            + #"{"recordedAt":"2026-11-21T10:00:05+01:00","altitude":-3.25E+1,"speed":1.5e-3,"lon":-117.91901,"lat":33.81211,"id":"ü ✓"}]"#,
        " \n\t[ { \"lat\" : 0 , \"lon\" : -0 , \"recordedAt\" : \"2026-11-21T10:00:00.5Z\" } ]\r\n",
        #"{"lat":100,"lon":1e2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
        "[]",
        " [ ] ",
        #"[{"id":"phone-7f3a-000123","lat":48.8738,"lon":2.7758,"accuracy":4,"speed":0.8,"recordedAt":"2026-11-21T10:00:00.250Z"}]"#,
    ]

    @Test func readsWhatClientsSend() {
        for text in Self.plain {
            let body = Array(text.utf8)
            let read = Self.read(body)
            #expect(read != nil, "\(text)")
            #expect(read == Self.decoded(body), "\(text)")
        }
        let fix = Self.read(Array(Self.plain[2].utf8))?[1]
        #expect(fix == IncomingFix(clientID: "ü ✓", lat: 33.81211, lon: -117.91901, accuracy: nil,
                                   recordedAt: Date(timeIntervalSince1970: 1_795_251_605), speed: 0.0015, altitude: -32.5))
    }

    /// Bodies outside the plain shape are not read, whether the decoder takes them or not.
    @Test func leavesTheRestToTheDecoder() {
        let others = [
            #"{"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z","id":"a\"b"}"#,
            #"{"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z","id":"a\nb"}"#,
            #"{"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z","id":"a\\"}"#,
            #"{"l\u0061t":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":1,"lon":2,"accuracy":null,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z","note":"x"}"#,
            #"{"lat":1,"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":1,"lon":2}"#,
            #"{"lat":01,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":1.,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":1e400,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":"1","lon":2,"recordedAt":"2026-11-21T10:00:00Z"}"#,
            #"{"lat":1,"lon":2,"recordedAt":"yesterday"}"#,
            #"[{"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"},]"#,
            #"[{"lat":1,"lon":2,"recordedAt":"2026-11-21T10:00:00Z"}] x"#,
            #"{}"#, "", "[", "nul",
        ]
        for text in others {
            #expect(Self.read(Array(text.utf8)) == nil, "\(text)")
        }
    }

    /// Numbers in every form JSON allows read to the same `Double` as the decoder's.
    @Test func readsNumbersAsTheDecoderDoes() {
        var g = SeededGenerator(seed: 15)
        for _ in 0..<3_000 {
            let value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &g))
            guard value.isFinite else { continue }
            let forms = [String(value), String(format: "%.17g", value), String(format: "%.3e", value), String(format: "%.9f", value / 1e300)]
            for form in forms {
                let body = Array(#"{"lat":\#(form),"lon":0,"recordedAt":"2026-11-21T10:00:00Z"}"#.utf8)
                #expect(Self.read(body) == Self.decoded(body), "\(form)")
            }
        }
    }

    /// Numbers past the normal range, where `Double`'s reading and the decoder's part (the fuzz
    /// target found `1.5e-7777…3` read as 0): the plain reader leaves them to the decoder, or reads
    /// them as it does.
    @Test func leavesNumbersPastTheNormalRangeToTheDecoder() {
        let forms = ["1.5e-77777777777777777777777777773", "1e-400", "-1.5e-999", "4.9e-324", "1e-320", "2.2e-308",
                     "1e400", "0e-99999", "0.000e5", "-0.0", "0e0", "1.000e5", "2.50e1", "-0.0e1", "12.5E+001"]
        for form in forms {
            let body = Array(#"{"lat":1,"lon":2,"speed":\#(form),"recordedAt":"2026-11-21T10:00:00Z"}"#.utf8)
            if let fast = Self.read(body) { #expect(fast == Self.decoded(body), "\(form)") }
        }
        let underflow = Array(#"{"lat":1,"lon":2,"speed":1.5e-7777777777,"recordedAt":"2026-11-21T10:00:00Z"}"#.utf8)
        #expect(Self.read(underflow) == nil)
    }

    /// Plain bodies broken at random, a few bytes at a time: whatever is still read is read as the
    /// decoder reads it. Both readings must occur, or the test explores nothing.
    @Test func agreesWithTheDecoderOnBrokenBodies() {
        var g = SeededGenerator(seed: 20_261_123)
        let alphabet = Array("{}[]\",:.-+eE0123456789 \n\\tnula\u{0}Zü".utf8)
        var read = 0, refused = 0, decodedOnly = 0
        for _ in 0..<20_000 {
            var body = Array(Self.plain.randomElement(using: &g)!.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &g) where !body.isEmpty {
                let i = Int.random(in: 0..<body.count, using: &g)
                switch Int.random(in: 0..<4, using: &g) {
                case 0: body.remove(at: i)
                case 1: body.insert(alphabet.randomElement(using: &g)!, at: i)
                case 2: body[i] = alphabet.randomElement(using: &g)!
                default: body.insert(contentsOf: body[i..<min(body.count, i + Int.random(in: 1...8, using: &g))], at: i)
                }
            }
            let fast = Self.read(body), reference = Self.decoded(body)
            if let fast {
                read += 1
                #expect(fast == reference, "\(String(decoding: body, as: UTF8.self))")
            } else if reference == nil {
                refused += 1
            } else {
                decodedOnly += 1
            }
        }
        #expect(read > 1_000 && refused > 1_000 && decodedOnly > 10, "read \(read), refused by both \(refused), left to the decoder \(decodedOnly)")
    }
}
