import CoasterCore
import Foundation
import Testing

/// `JSONSyntax`: the two things RFC 8259 forbids that Foundation's parser accepts.
struct JSONSyntaxTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var json: String
        var laxity: JSONSyntax.Laxity?
        var testDescription: String { self.json }
    }

    static let cases: [Case] = [
        // Trailing commas, where Foundation reads past them.
        Case(json: #"{"a":1,}"#, laxity: .init(kind: .trailingComma(closing: "}"), offset: 6)),
        Case(json: #"[1, 2 , ]"#, laxity: .init(kind: .trailingComma(closing: "]"), offset: 6)),
        Case(json: "{\"a\":[{\"b\":true,\n}]}", laxity: .init(kind: .trailingComma(closing: "}"), offset: 15)),
        Case(json: #"{"a":"x,}",}"#, laxity: .init(kind: .trailingComma(closing: "}"), offset: 10)),
        Case(json: #"{"a":"\"}",}"#, laxity: .init(kind: .trailingComma(closing: "}"), offset: 10)),
        // Repeated names, compared as the text they stand for.
        Case(json: #"{"minutes":5,"minutes":500}"#, laxity: .init(kind: .repeatedName("minutes"), offset: 13)),
        Case(json: #"{"a":1,"\u0061":2}"#, laxity: .init(kind: .repeatedName("a"), offset: 7)),
        Case(json: #"{"\ud83c\udfa2":1,"🎢":2}"#, laxity: .init(kind: .repeatedName("🎢"), offset: 18)),
        Case(json: #"{"a\"b":1,"a\u0022b":2}"#, laxity: .init(kind: .repeatedName("a\"b"), offset: 10)),
        Case(json: #"{"a":{"b":1},"a":2}"#, laxity: .init(kind: .repeatedName("a"), offset: 13)),
        Case(json: #"[{"a":1},{"b":[1,{"c":1,"c":2}]}]"#, laxity: .init(kind: .repeatedName("c"), offset: 24)),
        // Strict JSON: the same name in other objects, names as values, commas and braces in strings.
        Case(json: #"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#, laxity: nil),
        Case(json: #"{"a":"a","b":"a","c":["a","a"]}"#, laxity: nil),
        Case(json: #"{"a,}":"],","\"":"\\","ab":1,"a\u0062c":2}"#, laxity: nil),
        Case(json: #"{"é":1,"e\u0301x":2}"#, laxity: nil),
        Case(json: " [ ] ", laxity: nil),
        Case(json: "{}", laxity: nil),
        Case(json: "12", laxity: nil),
    ]

    @Test(arguments: Self.cases) func findsTheFirstLaxity(_ c: Case) throws {
        #expect(JSONSyntax.laxity(in: Data(c.json.utf8)) == c.laxity)
        // Every case is JSON to Foundation: these are what it lets through, not what it refuses.
        #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(c.json.utf8), options: [.fragmentsAllowed]) }
    }

    @Test func strictRefusesWhatTheDecoderAccepts() throws {
        let lax = Data(#"{"minutes":5,"minutes":500}"#.utf8)
        #expect(try JSONDecoder().decode(JSONValue.self, from: lax) == .object(["minutes": .number(5)]))
        #expect(throws: JSONSyntax.Laxity(kind: .repeatedName("minutes"), offset: 13)) { try JSONValue.strict(lax) }
        #expect(try JSONValue.strict(Data(#"{"minutes":5}"#.utf8)) == .object(["minutes": .number(5)]))
        // Not JSON at all stays Foundation's error.
        #expect(throws: DecodingError.self) { try JSONValue.strict(Data("{".utf8)) }
    }

    @Test func sayWhatAndWhere() {
        #expect(JSONSyntax.Laxity(kind: .trailingComma(closing: "]"), offset: 6).description == "a comma before the ] at character 6")
        #expect(JSONSyntax.Laxity(kind: .repeatedName("minutes"), offset: 13).description
            == #"the name "minutes" twice in one object, again at character 13"#)
    }

    /// No real document is refused: the shipped parks and the third-party files of Tests/Fixtures.
    @Test func realDocumentsAreStrictJSON() throws {
        let roots = [Fixtures.parksDirectory, Fixtures.thirdParty]
        var read = 0
        for root in roots {
            guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in files where ["json", "geojson"].contains(url.pathExtension) {
                let data = try Data(contentsOf: url)
                #expect(JSONSyntax.laxity(in: data) == nil, "\(url.path)")
                read += 1
            }
        }
        #expect(read >= 7)
    }

    /// Truncated, cut and spliced bytes never trap the scan (the fuzzers feed it worse).
    @Test func anyBytesAreScanned() {
        var generator = SeededGenerator(seed: 20261125)
        let pieces = [#"{"#, #"}"#, #"["#, #"]"#, #","#, #":"#, #"""#, #"\"#, #"\u"#, #"\ud83c"#, "a", "1", " ", "é"]
        for _ in 0..<5000 {
            let text = (0..<Int.random(in: 0..<24, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            _ = JSONSyntax.laxity(in: Data(text.utf8))
        }
    }
}
