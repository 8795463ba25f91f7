import CoasterCore
import Foundation
import Testing

/// `JSONSyntax`: RFC 8259 judged byte by byte, the first fault named with its byte offset, line
/// and column.
struct JSONSyntaxTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var fault: JSONSyntax.Fault?
        var testDescription: String { String(reflecting: String(decoding: self.bytes.prefix(80), as: UTF8.self)) }

        init(_ text: String, _ kind: JSONSyntax.Fault.Kind, at offset: Int, line: Int = 1, column: Int? = nil) {
            self.init(bytes: Array(text.utf8), kind, at: offset, line: line, column: column)
        }

        init(bytes: [UInt8], _ kind: JSONSyntax.Fault.Kind, at offset: Int, line: Int = 1, column: Int? = nil) {
            self.bytes = bytes
            self.fault = JSONSyntax.Fault(kind: kind, offset: offset, line: line, column: column ?? offset + 1)
        }

        init(valid text: String) {
            self.bytes = Array(text.utf8)
            self.fault = nil
        }
    }

    static func ascii(_ character: Character) -> UInt8 { character.asciiValue! }

    /// `{"k0":1,"k1":1,…}` with `names` names, each with `value`.
    static func object(names: Int, value: String = "1") -> String {
        let members: [String] = (0..<names).map { (n: Int) -> String in "\"k\(n)\":" + value }
        return "{" + members.joined(separator: ",") + "}"
    }

    static let faults: [Case] = [
        // Where a body ends too soon.
        Case(#"{"type":"FeatureCollection","features":["#, .unexpectedEnd, at: 40),
        Case("", .unexpectedEnd, at: 0),
        Case("  \n ", .unexpectedEnd, at: 4, line: 2, column: 2),
        Case(#"{"lat":1,"lon":2,"#, .unexpectedEnd, at: 17),
        Case(#"["abc"#, .unexpectedEnd, at: 5),
        Case(#"["\"#, .unexpectedEnd, at: 3),
        Case(#"["\u12"#, .unexpectedEnd, at: 6),
        Case(#"["\ud83c"#, .unexpectedEnd, at: 8),
        Case("[tru", .unexpectedEnd, at: 4),
        Case("nul", .unexpectedEnd, at: 3),
        Case("[1.", .unexpectedEnd, at: 3),
        Case("[-", .unexpectedEnd, at: 2),
        Case(bytes: [0x5B, 0x22, 0xE2, 0x82], .unexpectedEnd, at: 4, column: 4),
        // A byte where its kind may not be.
        Case("[01]", .unexpectedByte(ascii("1")), at: 2),
        Case("[1 2]", .unexpectedByte(ascii("2")), at: 3),
        Case(#"{"lat":1 "lon":2}"#, .unexpectedByte(ascii("\"")), at: 9),
        Case(#"{"a" 1}"#, .unexpectedByte(ascii("1")), at: 5),
        Case("{1:2}", .unexpectedByte(ascii("1")), at: 1),
        Case("{,}", .unexpectedByte(ascii(",")), at: 1),
        Case("[1,,2]", .unexpectedByte(ascii(",")), at: 3),
        Case("[1,}", .unexpectedByte(ascii("}")), at: 3),
        Case(#"{"a":1,]"#, .unexpectedByte(ascii("]")), at: 7),
        Case(#"{"a":[1,2}"#, .unexpectedByte(ascii("}")), at: 9),
        Case(#"{"a":1,"b"}"#, .unexpectedByte(ascii("}")), at: 10),
        Case("[.5]", .unexpectedByte(ascii(".")), at: 1),
        Case("[+1]", .unexpectedByte(ascii("+")), at: 1),
        Case("[trUe]", .unexpectedByte(ascii("U")), at: 3),
        Case("['a']", .unexpectedByte(ascii("'")), at: 1),
        Case("[1,\u{0B}2]", .unexpectedByte(0x0B), at: 3),
        Case(bytes: [0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00], .unexpectedByte(0xFF), at: 0),
        Case(bytes: [0x5B, 0xC3, 0xA9, 0x5D], .unexpectedByte(0xC3), at: 1),
        // After the value.
        Case("1 2", .trailingBytes(ascii("2")), at: 2),
        Case(#"{"a":1}}"#, .trailingBytes(ascii("}")), at: 7),
        Case(bytes: Array("[1]".utf8) + [0x00], .trailingBytes(0x00), at: 3),
        // Strings.
        Case("[\"a\nb\"]", .controlCharacter(0x0A), at: 3),
        Case("[\"a\tb\"]", .controlCharacter(0x09), at: 3),
        Case(bytes: [0x5B, 0x22, 0x00, 0x22, 0x5D], .controlCharacter(0x00), at: 2),
        Case(#"["a\qb"]"#, .invalidEscape(ascii("q")), at: 3),
        Case(#"["\'"]"#, .invalidEscape(ascii("'")), at: 2),
        Case(#"["\u12G4"]"#, .invalidUnicodeEscape, at: 2),
        Case(#"["\ud83c\u12"]"#, .invalidUnicodeEscape, at: 8),
        Case(#"["\ud800"]"#, .loneSurrogate(0xD800), at: 2),
        Case(#"["\ud800\u0041"]"#, .loneSurrogate(0xD800), at: 2),
        Case(#"["x\udc00"]"#, .loneSurrogate(0xDC00), at: 3),
        Case(#"["\udfa2\ud83c"]"#, .loneSurrogate(0xDFA2), at: 2),
        Case(bytes: [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D], .invalidUTF8, at: 2),
        Case(bytes: [0x5B, 0x22, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Case(bytes: [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D], .invalidUTF8, at: 2),
        Case(bytes: [0x5B, 0x22, 0xE0, 0x80, 0xAF, 0x22, 0x5D], .invalidUTF8, at: 2),
        Case(bytes: [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Case(bytes: [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Case(bytes: [0x5B, 0x22, 0xF8, 0x88, 0x80, 0x80, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        // Numbers: the grammar, then a `Double`'s range.
        Case("[-]", .malformedNumber, at: 1),
        Case("[1.]", .malformedNumber, at: 1),
        Case("[1.e5]", .malformedNumber, at: 1),
        Case("[1e]", .malformedNumber, at: 1),
        Case("[1e+]", .malformedNumber, at: 1),
        Case(#"{"a":-x}"#, .malformedNumber, at: 5),
        Case("[1e400]", .numberOutOfRange("1e400"), at: 1),
        Case(#"{"lat":-1e999}"#, .numberOutOfRange("-1e999"), at: 7),
        Case("[1e-400]", .numberOutOfRange("1e-400"), at: 1),
        Case("[2e-324]", .numberOutOfRange("2e-324"), at: 1),
        Case("[0.0000000001e-315]", .numberOutOfRange("0.0000000001e-315"), at: 1),
        Case("[1.7976931348623159e308]", .numberOutOfRange("1.7976931348623159e308"), at: 1),
        Case("[" + String(repeating: "9", count: 400) + "]", .numberOutOfRange(String(repeating: "9", count: 40) + "…"), at: 1),
        Case("[1" + String(repeating: "0", count: 100_000) + "e-99691]", .numberOutOfRange("1" + String(repeating: "0", count: 39) + "…"), at: 1),
        Case("[17976931348623159" + String(repeating: "0", count: 1_000) + "e-708]", .numberOutOfRange("17976931348623159" + String(repeating: "0", count: 23) + "…"), at: 1),
        // What Foundation's parser lets through: a comma before the close, a name twice.
        Case("[1,2,]", .trailingComma(closing: "]"), at: 4),
        Case(#"{"a":1,}"#, .trailingComma(closing: "}"), at: 6),
        Case(#"{"a":"x,}",}"#, .trailingComma(closing: "}"), at: 10),
        Case(#"{"a":"\"}",}"#, .trailingComma(closing: "}"), at: 10),
        Case("{\"a\":[{\"b\":true,\n}]}", .trailingComma(closing: "}"), at: 15),
        Case("{\n  \"lat\": 1,\n  \"lon\": 2,\n}", .trailingComma(closing: "}"), at: 24, line: 3, column: 11),
        Case("[\n  1,\n  2 , ]", .trailingComma(closing: "]"), at: 11, line: 3, column: 5),
        Case(#"{"minutes":5,"minutes":500}"#, .repeatedName("minutes"), at: 13),
        Case(#"{"a":1,"\u0061":2}"#, .repeatedName("a"), at: 7),
        Case(#"{"a\"b":1,"a\u0022b":2}"#, .repeatedName("a\"b"), at: 10),
        Case(#"{"\ud83c\udfa2":1,"🎢":2}"#, .repeatedName("🎢"), at: 18),
        // Canonically equivalent names are one name to Swift's strings, and so to the decoder.
        Case("{\"\u{E9}\":1,\"e\u{301}\":2}", .repeatedName("\u{E9}"), at: 8, column: 8),
        Case("{\"\u{212A}\":1,\"K\":2}", .repeatedName("K"), at: 9, column: 8),
        Case(#"{"a":{"b":1},"a":2}"#, .repeatedName("a"), at: 13),
        Case(#"[{"a":1},{"b":[1,{"c":1,"c":2}]}]"#, .repeatedName("c"), at: 24),
        // Past the names compared one by one: the set takes over, the first sixteen in it too.
        Case(String(Self.object(names: 40).dropLast()) + #","k3":2}"#, .repeatedName("k3"), at: 311),
        Case(String(Self.object(names: 16).dropLast()) + #","k15":2}"#, .repeatedName("k15"), at: 119),
        // Nesting.
        Case(String(repeating: "[", count: 513), .tooDeep, at: 512),
        Case(String(repeating: "{\"a\":", count: 600), .tooDeep, at: 2560),
        // Lines and columns: characters, not bytes, after multibyte UTF-8; a byte order mark is no column.
        Case(#"["Élan 🎢", x]"#, .unexpectedByte(ascii("x")), at: 15, column: 12),
        Case("[\"é\",\n \"ü\", x]", .unexpectedByte(ascii("x")), at: 14, line: 2, column: 7),
        Case("{\"name\":\"Élan 🎢\",\n \"x\": nope}", .unexpectedByte(ascii("o")), at: 29, line: 2, column: 8),
        Case("[\r\n1,\r\n2,\r\n]", .trailingComma(closing: "]"), at: 8, line: 3, column: 2),
        Case(bytes: [0xEF, 0xBB, 0xBF] + Array("[x]".utf8), .unexpectedByte(ascii("x")), at: 4, column: 2),
    ]

    @Test(arguments: Self.faults) func namesTheFirstFaultAndWhere(_ c: Case) {
        #expect(JSONSyntax.fault(in: Data(c.bytes)) == c.fault)
    }

    static let valid: [Case] = [
        Case(valid: "null"), Case(valid: "true"), Case(valid: "false"), Case(valid: " 0 "), Case(valid: "-0"),
        Case(valid: "-0.0e+0"), Case(valid: "1E2"), Case(valid: "-123.456e-7"), Case(valid: "12345678901234567890"),
        Case(valid: "5e-324"), Case(valid: "1.7976931348623157e308"), Case(valid: "0.000000000000000000000000001"),
        Case(valid: "1" + String(repeating: "0", count: 100_000) + "e-99692"), Case(valid: "-0." + String(repeating: "0", count: 320) + "1"),
        Case(valid: #""""#), Case(valid: #""\"\\\/\b\f\n\r\t\u0000\u00e9\ud83c\udfa2""#), Case(valid: "\"é 🎢 ✓ \u{7F}\""),
        Case(valid: "[]"), Case(valid: "{}"), Case(valid: " \t\r\n[ ]\n"), Case(valid: #"{"":1}"#),
        Case(valid: #"[1,[2,[3]],{"a":{"a":{"a":1}}},null,true,"x"]"#),
        Case(valid: #"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#),
        Case(valid: #"{"a":"a","b":"a","c":["a","a"]}"#),
        Case(valid: #"{"a,}":"],","\"":"\\","ab":1,"a\u0062c":2}"#),
        Case(valid: #"{"é":1,"e\u0301x":2}"#),
        Case(valid: "[" + Array(repeating: Self.object(names: 20), count: 16).joined(separator: ",") + "]"),
        Case(valid: Self.object(names: 40, value: #"{"k":[{"x":1}]}"#)),
        Case(valid: String(repeating: "[", count: 512) + String(repeating: "]", count: 512)),
        Case(valid: #"{"lat":41.481656,"lon":-82.688132,"accuracy":5,"recordedAt":"2026-11-21T10:00:00Z"}"#),
    ]

    @Test(arguments: Self.valid) func acceptsJSONOfEveryKind(_ c: Case) throws {
        #expect(JSONSyntax.fault(in: Data(c.bytes)) == nil)
        // Foundation reads each as well: the validator refuses nothing it reads but the two laxities.
        #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(c.bytes), options: [.fragmentsAllowed]) }
    }

    @Test func aByteOrderMarkIsSkipped() {
        #expect(JSONSyntax.fault(in: Data([0xEF, 0xBB, 0xBF] + Array("[1]".utf8))) == nil)
    }

    @Test func sayWhatAndWhere() {
        func said(_ kind: JSONSyntax.Fault.Kind, _ offset: Int = 38, line: Int = 1, column: Int = 39) -> String {
            JSONSyntax.Fault(kind: kind, offset: offset, line: line, column: column).description
        }
        #expect(said(.unexpectedEnd) == "unexpected end of the body at byte 38 (line 1, column 39)")
        #expect(said(.trailingComma(closing: "]"), 12, line: 2, column: 5) == "a comma before the ] at byte 12 (line 2, column 5)")
        #expect(said(.unexpectedByte(0x78)) == "unexpected 'x' at byte 38 (line 1, column 39)")
        #expect(said(.unexpectedByte(0x00)) == "unexpected byte 0x00 at byte 38 (line 1, column 39)")
        #expect(said(.unexpectedByte(0xC3)) == "unexpected byte 0xC3 at byte 38 (line 1, column 39)")
        #expect(said(.trailingBytes(0x78)) == "unexpected 'x' after the value at byte 38 (line 1, column 39)")
        #expect(said(.controlCharacter(0x0A)) == "a control character (0x0A) in a string at byte 38 (line 1, column 39)")
        #expect(said(.invalidEscape(0x71)) == #"an invalid escape \q at byte 38 (line 1, column 39)"#)
        #expect(said(.invalidEscape(0xC3)) == #"an invalid escape (\ then 0xC3) at byte 38 (line 1, column 39)"#)
        #expect(said(.invalidUnicodeEscape) == #"a \u escape without four hexadecimal digits at byte 38 (line 1, column 39)"#)
        #expect(said(.loneSurrogate(0xD83C)) == #"a lone surrogate \uD83C at byte 38 (line 1, column 39)"#)
        #expect(said(.invalidUTF8) == "invalid UTF-8 at byte 38 (line 1, column 39)")
        #expect(said(.malformedNumber) == "a malformed number at byte 38 (line 1, column 39)")
        #expect(said(.numberOutOfRange("1e400")) == "the number 1e400 is out of range at byte 38 (line 1, column 39)")
        #expect(said(.repeatedName("minutes"), 13, column: 14) == #"the name "minutes" twice in one object, again at byte 13 (line 1, column 14)"#)
        #expect(said(.tooDeep, 512, column: 513) == "more than 512 nested arrays and objects at byte 512 (line 1, column 513)")
    }

    @Test func strictChecksSyntaxBeforeFoundationReads() throws {
        // Foundation's decoder keeps the first of two names; strict refuses the body.
        let lax = Data(#"{"minutes":5,"minutes":500}"#.utf8)
        #expect(try JSONDecoder().decode(JSONValue.self, from: lax) == .object(["minutes": .number(5)]))
        #expect(throws: JSONSyntax.Fault(kind: .repeatedName("minutes"), offset: 13, line: 1, column: 14)) { try JSONValue.strict(lax) }
        // What Foundation calls only "not valid JSON" is ours, with where.
        #expect(throws: JSONSyntax.Fault(kind: .unexpectedEnd, offset: 1, line: 1, column: 2)) { try JSONValue.strict(Data("{".utf8)) }
        #expect(throws: JSONSyntax.Fault(kind: .numberOutOfRange("1e400"), offset: 1, line: 1, column: 2)) { try JSONValue.strict(Data("[1e400]".utf8)) }
        #expect(try JSONValue.strict(Data(#"{"minutes":5}"#.utf8)) == .object(["minutes": .number(5)]))
    }

    /// 100,000 open arrays are refused at the 513th, without recursion (the scan would overflow
    /// no stack if it went on) and without reading the rest.
    @Test func deepNestingIsRefusedAtTheLimit() {
        let deep = Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(JSONSyntax.fault(in: deep) == JSONSyntax.Fault(kind: .tooDeep, offset: 512, line: 1, column: 513))
        let objects = Data(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(JSONSyntax.fault(in: objects)?.kind == .tooDeep)
        #expect(JSONSyntax.maximumDepth == 512)
    }

    /// No real document is refused: the shipped parks and the third-party geodata of Tests/Fixtures
    /// (not the OwnTracks test messages, some of which are broken on purpose).
    @Test func realDocumentsAreJSON() throws {
        let roots = [Fixtures.parksDirectory, Fixtures.thirdParty.appendingPathComponent("osm-park-geofences"),
                     Fixtures.thirdParty.appendingPathComponent("disneyland-anaheim-gps-points")]
        var read = 0
        for root in roots {
            guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in files where ["json", "geojson"].contains(url.pathExtension) {
                let data = try Data(contentsOf: url)
                #expect(JSONSyntax.fault(in: data) == nil, "\(url.path)")
                read += 1
            }
        }
        #expect(read == 5)
    }

    /// Cut and spliced bytes: the scan never traps, places every fault within the bytes, and
    /// accepts exactly what Foundation's parser reads, but for the two laxities it refuses and
    /// bytes with a NUL (which Foundation takes for UTF-16 or UTF-32, and RFC 8259 §8.1 for no JSON).
    @Test func agreesWithFoundationOnSplicedBytes() {
        var generator = SeededGenerator(seed: 20261125)
        let pieces = [#"{"#, #"}"#, #"["#, #"]"#, #","#, #":"#, #"""#, #"\"#, #"\u"#, #"\ud83c"#, #"\udfa2"#, "00", "a", "1", "-", ".", "e",
                      " ", "\n", "é", "🎢", "true", "nul", #""a""#, #""a":"#, "\u{0}", "\u{1F}"]
        var accepted = 0
        for _ in 0..<5000 {
            let text = (0..<Int.random(in: 0..<16, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let data = Data(text.utf8)
            let fault = JSONSyntax.fault(in: data)
            let foundation = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
            if let fault {
                #expect(fault.offset <= data.count && fault.line >= 1 && fault.column >= 1, "\(text)")
                switch fault.kind {
                case .trailingComma, .repeatedName: break
                case _ where data.contains(0): break
                default: #expect(!foundation, "refused what Foundation reads: \(String(reflecting: text)) \(fault)")
                }
            } else {
                accepted += 1
                #expect(foundation, "accepted what Foundation refuses: \(String(reflecting: text))")
            }
        }
        // Enough of them JSON that the comparison is made both ways.
        #expect(accepted > 20)
    }
}
