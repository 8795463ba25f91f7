import Foundation

/// The two bodies an HTML form sends: `application/x-www-form-urlencoded` fields, and
/// `multipart/form-data` with a file. Both are read from a body already bounded by the route.
enum HTMLForm {
    /// `name=value&…` fields (WHATWG URL-encoded: `+` is a space, `%XX` a byte). A name given twice
    /// keeps its first value; bytes that are not UTF-8 become U+FFFD.
    static func urlEncoded(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(parts[0]), value = parts.count > 1 ? Self.decode(parts[1]) : ""
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }

    private static func decode(_ bytes: Data.SubSequence) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), i + 2 < bytes.endIndex,
                      let high = Self.hex(bytes[i + 1]), let low = Self.hex(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 2
            } else {
                out.append(byte)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A part of a multipart body: its field name, file name if it is a file, and bytes.
    struct Part {
        var name: String
        var filename: String?
        var body: Data
    }

    enum MultipartError: Error, Equatable {
        case notMultipart
        case malformed(String)
    }

    /// The boundary of a `multipart/form-data; boundary=…` content type (RFC 7578, RFC 2046 §5.1.1:
    /// 1–70 characters, quoted or not).
    static func boundary(_ contentType: String) -> String? {
        let parameters = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parameters.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = String(pair[1])
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// The parts of a multipart body. At most `maxParts` parts are read (a form of ours has three):
    /// a body of a million empty parts is refused, not walked.
    static func multipart(_ body: Data, boundary: String, maxParts: Int = 8) throws(MultipartError) -> [Part] {
        let delimiter = Data("--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8), blank = Data("\r\n\r\n".utf8)
        guard let first = body.range(of: delimiter) else { throw .malformed("the body has no part delimited by the boundary") }
        var parts: [Part] = []
        var cursor = first.upperBound
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if body[cursor...].starts(with: Data("--".utf8)) { return parts }
            guard body[cursor...].starts(with: crlf) else { throw .malformed("a boundary is not followed by a line break") }
            guard parts.count < maxParts else { throw .malformed("more than \(maxParts) parts") }
            let headerStart = cursor + crlf.count
            guard let headerEnd = body.range(of: blank, in: headerStart..<body.endIndex) else { throw .malformed("a part's headers do not end") }
            guard headerEnd.lowerBound - headerStart <= 8192 else { throw .malformed("a part's headers are too long") }
            let headers = String(decoding: body[headerStart..<headerEnd.lowerBound], as: UTF8.self)
            guard let next = body.range(of: crlf + delimiter, in: headerEnd.upperBound..<body.endIndex) else {
                throw .malformed("a part does not end with the boundary")
            }
            guard let disposition = Self.disposition(headers) else { throw .malformed("a part has no Content-Disposition: form-data name") }
            parts.append(Part(name: disposition.name, filename: disposition.filename, body: body.subdata(in: headerEnd.upperBound..<next.lowerBound)))
            cursor = next.upperBound
        }
    }

    /// `name` and `filename` of a part's `Content-Disposition: form-data; name="…"; filename="…"`.
    private static func disposition(_ headers: String) -> (name: String, filename: String?)? {
        for line in headers.split(separator: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-disposition" else { continue }
            var name: String?, filename: String?
            for parameter in pair[1].split(separator: ";").dropFirst() {
                let kv = parameter.split(separator: "=", maxSplits: 1)
                guard kv.count == 2 else { continue }
                var value = kv[1].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                switch kv[0].trimmingCharacters(in: .whitespaces).lowercased() {
                case "name": name = value
                case "filename": filename = value
                default: break
                }
            }
            return name.map { ($0, filename) }
        }
        return nil
    }
}
