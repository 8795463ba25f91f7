import CoasterHTTP
import Foundation
import NIOCore
import Testing

/// An object listed once (``JSONObject``) is written and encoded from the same list: the same
/// bytes both ways, members left out where they are `nil`, nested objects, arrays and optionals.
@Suite("JSON objects")
struct JSONObjectTests {
    struct Inner: JSONObject, Sendable {
        var name: String
        var at: Date?

        static let members: [JSONMember<Self>] = [.init("at", \.at), .init("name", \.name)]
    }

    struct Outer: JSONObject, JSONWritable, Sendable {
        var count: Int
        var flag: Bool?
        var id: Int64
        var inner: Inner?
        var list: [Inner]
        var ratio: Double
        var tags: [String]?

        static let members: [JSONMember<Self>] = [
            .init("count", \.count), .init("flag", \.flag), .init("id", \.id), .init("inner", \.inner), .init("list", \.list),
            .init("ratio", \.ratio), .init("tags", \.tags),
        ]
    }

    static let at = Date(timeIntervalSince1970: 1_781_092_800.75)

    func expect(_ value: Outer, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(String(buffer: value.jsonBuffer) == expected, sourceLocation: sourceLocation)
        let encoded = try JSONWriterTests.encoder.encode(value)
        #expect(String(decoding: encoded, as: UTF8.self) == expected, sourceLocation: sourceLocation)
    }

    @Test func everyMemberPresent() throws {
        let inner = Inner(name: "a \"b\" / c", at: Self.at)
        try self.expect(Outer(count: -3, flag: false, id: .max, inner: inner, list: [inner, Inner(name: "", at: nil)], ratio: 12.5, tags: ["x", ""]),
                        #"{"count":-3,"flag":false,"id":9223372036854775807,"inner":{"at":"2026-06-10T12:00:00Z","name":"a \"b\" / c"},"#
                            + #""list":[{"at":"2026-06-10T12:00:00Z","name":"a \"b\" / c"},{"name":""}],"ratio":12.5,"tags":["x",""]}"#)
    }

    @Test func absentMembersAreLeftOut() throws {
        try self.expect(Outer(count: 0, flag: nil, id: 0, inner: nil, list: [], ratio: 2, tags: nil), #"{"count":0,"id":0,"list":[],"ratio":2}"#)
    }

    /// The key strategy of the encoder applies to the listed names as to synthesized ones.
    @Test func keyStrategiesApply() throws {
        struct Pair: JSONObject {
            var heightM: Double
            var speedKmh: Double?
            static let members: [JSONMember<Self>] = [.init("heightM", \.heightM), .init("speedKmh", \.speedKmh)]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(String(decoding: try encoder.encode(Pair(heightM: 1.5, speedKmh: 3)), as: UTF8.self) == #"{"height_m":1.5,"speed_kmh":3}"#)
    }
}
