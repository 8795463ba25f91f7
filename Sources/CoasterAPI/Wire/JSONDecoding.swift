import CoasterCore
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

    /// Decodes `data` with ``decoder``, held to RFC 8259 where the decoder is lax (a trailing
    /// comma, a repeated name: ``JSONSyntax``). Where the bytes are not JSON, `JSONDecoder` says only
    /// "The given data was not valid JSON." (no position, no reason, for a missing comma as for a
    /// number out of range); the error thrown then says what and where, as `JSONSerialization`
    /// finds it. A body that is JSON but lax is refused as not JSON, before its shape is judged.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let value: T
        do {
            value = try Self.decoder.decode(T.self, from: data)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty && context.underlyingError == nil {
            guard let reason = Self.syntaxError(in: data) else { throw DecodingError.dataCorrupted(context) }
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON: \(reason)"))
        } catch {
            if let laxity = JSONSyntax.laxity(in: data) { throw Self.notJSON(laxity) }
            throw error
        }
        if let laxity = JSONSyntax.laxity(in: data) { throw Self.notJSON(laxity) }
        return value
    }

    private static func notJSON(_ laxity: JSONSyntax.Laxity) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON: \(laxity)"))
    }

    /// What makes `data` no JSON, in a client's words (`nil` if it is JSON): "invalid value around
    /// character 10" (counted from 0), "unexpected end of the body", "the number 1e400 is out of range".
    static func syntaxError(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            guard var reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String, !reason.isEmpty else { return nil }
            if reason.hasSuffix(".") { reason.removeLast() }
            if reason.hasPrefix("Number "), let end = reason.range(of: " is not representable") {
                return "the number \(reason.dropFirst("Number ".count)[..<end.lowerBound]) is out of range"
            }
            if reason == "Unexpected end of file during JSON parse" { return "unexpected end of the body" }
            return reason.prefix(1).lowercased() + reason.dropFirst()
        }
    }
}

/// RFC 3339 times, with or without fractional seconds.
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
