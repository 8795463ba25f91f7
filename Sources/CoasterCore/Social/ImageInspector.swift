import Foundation

/// What an uploaded image is, judged by its bytes, never by the declared type.
public struct InspectedImage: Hashable, Sendable {
    public enum Format: String, Sendable, Codable, CaseIterable {
        case jpeg, png, heic

        public var contentType: String {
            switch self {
            case .jpeg: "image/jpeg"
            case .png: "image/png"
            case .heic: "image/heic"
            }
        }

        public var fileExtension: String { self.rawValue == "jpeg" ? "jpg" : self.rawValue }
    }

    public var format: Format
    public var width: Int
    public var height: Int
    /// The bytes to store: metadata that can carry a location removed.
    public var bytes: [UInt8]
    /// Whether anything was removed.
    public var stripped: Bool
}

public enum ImageRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    case notAnImage
    case unreadable(String)
    case tooLarge(width: Int, height: Int)
    /// A HEIC whose embedded EXIF has GPS data: it cannot be rewritten here, so it is refused.
    case embeddedLocation

    public var description: String {
        switch self {
        case .notAnImage: "not a JPEG, PNG or HEIC image (judged by content)"
        case .unreadable(let why): "the image cannot be read: \(why)"
        case .tooLarge(let w, let h): "\(w)×\(h) pixels is larger than 20,000 on a side"
        case .embeddedLocation: "the HEIC carries GPS coordinates in its EXIF; export it without location, or as JPEG"
        }
    }
}

/// Reads and cleans uploaded photos (README "Photos").
///
/// JPEG: every APP1 (EXIF, XMP), APP13 (IPTC) and comment segment is dropped, since any can hold
/// GPS coordinates; the EXIF orientation, if there was one, is written back as a one-tag EXIF so
/// the photo still displays upright. PNG: `eXIf` and text chunks (`tEXt`, `zTXt`, `iTXt`, which
/// carry XMP) are dropped. HEIC: its metadata lives in item boxes that cannot be removed without
/// rewriting offsets, so a HEIC whose EXIF holds GPS tags is refused instead.
public enum ImageInspector {
    public static let maximumSide = 20_000

    public static func inspect(_ data: [UInt8]) throws(ImageRefusal) -> InspectedImage {
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return try Self.jpeg(data) }
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return try Self.png(data) }
        if data.count >= 12, Array(data[4..<8]) == Array("ftyp".utf8),
           ["heic", "heix", "mif1", "msf1", "heim", "heis", "hevc", "hevx"].contains(String(decoding: data[8..<12], as: UTF8.self)) {
            return try Self.heic(data)
        }
        throw .notAnImage
    }

    // MARK: JPEG

    static func jpeg(_ data: [UInt8]) throws(ImageRefusal) -> InspectedImage {
        var out: [UInt8] = [0xFF, 0xD8]
        var i = 2
        var width = 0, height = 0
        var orientation: UInt16?
        var stripped = false
        while i + 4 <= data.count {
            guard data[i] == 0xFF else { throw .unreadable("no JPEG marker at byte \(i)") }
            let marker = data[i + 1]
            if marker == 0xFF { i += 1; continue }
            if marker == 0xDA {
                // Start of scan: the rest is entropy-coded image data up to EOI; keep it as it is.
                out.append(contentsOf: data[i...])
                break
            }
            if marker == 0xD9 || (0xD0...0xD7).contains(marker) || marker == 0x01 {
                out.append(contentsOf: data[i..<i + 2])
                i += 2
                continue
            }
            let length = Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard length >= 2, i + 2 + length <= data.count else { throw .unreadable("a segment runs past the end of the file") }
            let segment = data[i..<(i + 2 + length)]
            let payload = data[(i + 4)..<(i + 2 + length)]
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard payload.count >= 5 else { throw .unreadable("a short frame header") }
                let p = payload.startIndex
                height = Int(payload[p + 1]) << 8 | Int(payload[p + 2])
                width = Int(payload[p + 3]) << 8 | Int(payload[p + 4])
                out.append(contentsOf: segment)
            case 0xE1:
                if payload.starts(with: Array("Exif\0\0".utf8)), orientation == nil {
                    orientation = Self.exifOrientation(Array(payload.dropFirst(6)))
                }
                stripped = true
            case 0xED, 0xFE:
                stripped = true
            default:
                out.append(contentsOf: segment)
            }
            i += 2 + length
        }
        guard width > 0, height > 0 else { throw .unreadable("no frame header with the image size") }
        guard width <= maximumSide, height <= maximumSide else { throw .tooLarge(width: width, height: height) }
        if let orientation, orientation != 1 {
            out.insert(contentsOf: Self.orientationSegment(orientation), at: 2)
        }
        return InspectedImage(format: .jpeg, width: width, height: height, bytes: out, stripped: stripped)
    }

    /// The Orientation tag (0x0112) of IFD0 of a TIFF-structured EXIF block.
    static func exifOrientation(_ tiff: [UInt8]) -> UInt16? {
        guard let ifd = TIFF(tiff) else { return nil }
        return ifd.entries(at: ifd.firstIFD).first { $0.tag == 0x0112 }.map { UInt16(truncatingIfNeeded: $0.value) }
    }

    /// An APP1 segment holding a minimal little-endian EXIF with only the orientation.
    static func orientationSegment(_ orientation: UInt16) -> [UInt8] {
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]  // "II", 42, IFD0 at 8
        tiff += [0x01, 0x00]                                                     // one entry
        tiff += [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00]                 // 0x0112, SHORT, count 1
        tiff += [UInt8(orientation & 0xFF), UInt8(orientation >> 8), 0x00, 0x00] // value
        tiff += [0x00, 0x00, 0x00, 0x00]                                         // no next IFD
        let payload = Array("Exif\0\0".utf8) + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    // MARK: PNG

    static func png(_ data: [UInt8]) throws(ImageRefusal) -> InspectedImage {
        var out = Array(data[0..<8])
        var i = 8
        var width = 0, height = 0
        var stripped = false
        var sawEnd = false
        while i + 12 <= data.count {
            let length = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard length >= 0, length <= data.count, i + 12 + length <= data.count else { throw .unreadable("a chunk runs past the end of the file") }
            let type = String(decoding: data[(i + 4)..<(i + 8)], as: UTF8.self)
            if type == "IHDR" {
                guard length >= 8 else { throw .unreadable("a short IHDR") }
                let p = i + 8
                width = Int(data[p]) << 24 | Int(data[p + 1]) << 16 | Int(data[p + 2]) << 8 | Int(data[p + 3])
                height = Int(data[p + 4]) << 24 | Int(data[p + 5]) << 16 | Int(data[p + 6]) << 8 | Int(data[p + 7])
            }
            if ["eXIf", "tEXt", "zTXt", "iTXt"].contains(type) {
                stripped = true
            } else {
                out.append(contentsOf: data[i..<(i + 12 + length)])
            }
            i += 12 + length
            if type == "IEND" { sawEnd = true; break }
        }
        guard width > 0, height > 0, sawEnd else { throw .unreadable("no IHDR or IEND chunk") }
        guard width <= maximumSide, height <= maximumSide else { throw .tooLarge(width: width, height: height) }
        return InspectedImage(format: .png, width: width, height: height, bytes: out, stripped: stripped)
    }

    // MARK: HEIC

    static func heic(_ data: [UInt8]) throws(ImageRefusal) -> InspectedImage {
        // The image size: the first 'ispe' property (version/flags, then width and height).
        guard let ispe = Self.find(Array("ispe".utf8), in: data), ispe + 16 <= data.count else { throw .unreadable("no ispe box") }
        let p = ispe + 8
        let width = Int(data[p]) << 24 | Int(data[p + 1]) << 16 | Int(data[p + 2]) << 8 | Int(data[p + 3])
        let height = Int(data[p + 4]) << 24 | Int(data[p + 5]) << 16 | Int(data[p + 6]) << 8 | Int(data[p + 7])
        guard width > 0, height > 0 else { throw .unreadable("an empty image") }
        guard width <= maximumSide, height <= maximumSide else { throw .tooLarge(width: width, height: height) }
        // The Exif item is a TIFF structure (after a 4-byte offset, with or without an "Exif\0\0"
        // prefix, depending on the encoder): look for TIFF headers of either byte order and
        // refuse when any has a GPS IFD with entries.
        for magic in [[0x4D, 0x4D, 0x00, 0x2A], [0x49, 0x49, 0x2A, 0x00]] as [[UInt8]] {
            var from = 0
            while let start = Self.find(magic, in: data, from: from) {
                if let tiff = TIFF(Array(data[start...].prefix(1 << 20))), tiff.hasGPS { throw .embeddedLocation }
                from = start + 4
            }
        }
        return InspectedImage(format: .heic, width: width, height: height, bytes: data, stripped: false)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int = 0) -> Int? {
        guard needle.count <= haystack.count, from <= haystack.count - needle.count else { return nil }
        var i = from
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}

/// Just enough TIFF to read IFD entries safely (bounds-checked; garbage gives nothing).
struct TIFF {
    struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        /// The value for SHORT/LONG with count 1, else the offset.
        var value: UInt32
    }

    let bytes: [UInt8]
    let little: Bool
    private(set) var firstIFD: Int

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        if bytes[0] == 0x49, bytes[1] == 0x49 { self.little = true } else if bytes[0] == 0x4D, bytes[1] == 0x4D { self.little = false } else { return nil }
        self.bytes = bytes
        self.firstIFD = 0
        guard self.u16(2) == 42, let first = self.u32(4) else { return nil }
        self.firstIFD = Int(first)
    }

    func u16(_ at: Int) -> UInt16? {
        guard at >= 0, at + 2 <= self.bytes.count else { return nil }
        let a = UInt16(self.bytes[at]), b = UInt16(self.bytes[at + 1])
        return self.little ? a | b << 8 : a << 8 | b
    }

    func u32(_ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= self.bytes.count else { return nil }
        let b = (0..<4).map { UInt32(self.bytes[at + $0]) }
        return self.little ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24 : b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
    }

    func entries(at offset: Int) -> [Entry] {
        guard let n = self.u16(offset), n < 1000 else { return [] }
        return (0..<Int(n)).compactMap { k in
            let e = offset + 2 + 12 * k
            guard let tag = self.u16(e), let type = self.u16(e + 2), let count = self.u32(e + 4) else { return nil }
            let value: UInt32? = type == 3 && count == 1 ? self.u16(e + 8).map(UInt32.init) : self.u32(e + 8)
            return value.map { Entry(tag: tag, type: type, count: count, value: $0) }
        }
    }

    /// IFD0 points at a GPS IFD (tag 0x8825) that holds at least one entry.
    var hasGPS: Bool {
        guard let gps = self.entries(at: self.firstIFD).first(where: { $0.tag == 0x8825 }) else { return false }
        return (self.u16(Int(gps.value)) ?? 0) > 0
    }
}
