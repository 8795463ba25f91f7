import Foundation

/// The one JSON decoder of request bodies (``JSONBody``): times are RFC 3339 strings.
enum JSONDecoding {
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an RFC 3339 time such as 2026-11-21T14:03:00Z")
            }
            return date
        }
        return decoder
    }()
}

/// RFC 3339 times, with or without fractional seconds.
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
