/// An enum that clients send by its raw string. A string that is none of its cases fails to
/// decode with the cases listed (`"exactish" is not one of "exact", "approximate", "park_only"`)
/// instead of Swift's own sentence, which names the Swift type ("Cannot initialize Precision from
/// invalid String value exactish") and not what would do.
public protocol NamedCases: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension NamedCases {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            let cases = Self.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(raw)\" is not one of \(cases)")
        }
        self = value
    }
}
