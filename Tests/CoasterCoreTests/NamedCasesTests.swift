import CoasterCore
import Foundation
import Testing

/// Enums clients send by name decode their cases, and refuse anything else by listing them.
@Suite("Named cases")
struct NamedCasesTests {
    struct Wrapped<T: Decodable>: Decodable { var value: T }

    static func failure<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
        do {
            _ = try JSONDecoder().decode(Wrapped<T>.self, from: Data(json.utf8))
            return nil
        } catch DecodingError.dataCorrupted(let context) {
            return context.debugDescription
        } catch {
            return "\(error)"
        }
    }

    @Test func decodesEveryCaseAndListsThemOtherwise() throws {
        for precision in Precision.allCases {
            #expect(try JSONDecoder().decode(Wrapped<Precision>.self, from: Data(#"{"value":"\#(precision.rawValue)"}"#.utf8)).value == precision)
        }
        #expect(Self.failure(Precision.self, #"{"value":"exactish"}"#) == #""exactish" is not one of "exact", "approximate", "park-only""#)
        #expect(Self.failure(Role.self, #"{"value":"root"}"#) == #""root" is not one of "member", "admin""#)
        #expect(Self.failure(RideCondition.self, #"{"value":""}"#)?.hasPrefix(#""" is not one of "#) == true)
        #expect(Self.failure(RideStatus.self, #"{"value":"Operating"}"#)?.contains(#""operating""#) == true)
    }
}
