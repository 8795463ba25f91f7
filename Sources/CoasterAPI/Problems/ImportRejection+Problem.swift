import CoasterCore
import CoasterHTTP
import HTTPTypes

extension Problem {
    /// A park file that failed validation: every issue with its feature index and JSON pointer.
    static func invalidParkFile(_ rejection: ImportRejection) -> Problem {
        let first = rejection.issues.first.map(\.description) ?? "invalid park file"
        let more = rejection.issues.count > 1 ? " (and \(rejection.issues.count - 1) more)" : ""
        return Problem(
            .invalidParkFile, status: .unprocessableContent, title: "Invalid park file",
            detail: "Nothing was written. \(first)\(more)",
            errors: rejection.issues.map { Problem.BodyError(pointer: $0.pointer, feature: $0.feature, detail: $0.reason) })
    }
}
