import Foundation
import Hummingbird

/// The request context of every CoasterLife route.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// Park files are the largest bodies the service takes (README "Limits").
    public var maxUploadSize: Int { 16 * 1024 * 1024 }

    /// RFC 3339 times, keys in a stable order, `/` unescaped (time zone names, URLs).
    public var responseEncoder: JSONEncoder { Self.encoder }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
