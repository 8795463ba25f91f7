import Foundation
import Logging

/// Log lines on standard error in swift-log's `StreamLogHandler` layout, with the metadata rendered
/// when a line is written rather than whenever it is set.
///
/// Hummingbird puts the request id into every request's logger; `StreamLogHandler` re-renders all
/// of its metadata on each such set, which was 3 % of a locate request's CPU with nothing logged.
struct StderrLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = self.metadata
        if let provided = self.metadataProvider?.get() { all.merge(provided) { $1 } }
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        if let error = event.error { all["error"] = "\(error)" }
        let rendered = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let text = "\(Date().formatted(.iso8601)) \(event.level) \(self.label):\(rendered) [\(event.source)] \(event.message)\n"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
