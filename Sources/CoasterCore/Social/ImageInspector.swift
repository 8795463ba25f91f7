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
    /// More than `ImageInspector.maximumSide` pixels on a side or `ImageInspector.maximumPixels` in all.
    case tooLarge(width: Int, height: Int)
    /// GPS coordinates that cannot be removed here: in a HEIC's EXIF or XMP, or left where no
    /// metadata should be.
    case embeddedLocation

    public var description: String {
        switch self {
        case .notAnImage: "not a JPEG, PNG or HEIC image (judged by content)"
        case .unreadable(let why): "the image cannot be read: \(why)"
        case .tooLarge(let w, let h): "\(w)×\(h) pixels is too large: at most 20,000 on a side and 64 megapixels in all"
        case .embeddedLocation: "the image carries GPS coordinates that cannot be removed here; export it without location, or as JPEG"
        }
    }
}

/// Reads and cleans uploaded photos (docs: SocialLayer, photos).
///
/// JPEG: rewritten from what decoding needs only (frame header, quantisation, Huffman, restart
/// and arithmetic-coding tables, the scans and their entropy-coded data) up to the first
/// end-of-image marker. Every APPn segment (EXIF, XMP, ICC, IPTC, MPF…), comment and unknown
/// segment, and everything after that marker (a second picture, trailers), is dropped, since any
/// can hold GPS coordinates; the EXIF orientation, if there was one, is written back as a one-tag
/// EXIF so the photo still displays upright. PNG: rewritten from IHDR, which must come first, to
/// IEND with only the chunks of `pngChunksKept`. HEIC: its metadata lives in items that cannot be
/// removed without rewriting offsets, so it is kept as it is, and refused when its EXIF or XMP
/// holds GPS. Whatever the format, the bytes kept are finally scanned for a location that
/// survived anywhere in them, and refused if one did.
///
/// The work is linear in the input's size (a 10 MiB upload): every loop advances through the
/// bytes or is capped, nothing is searched from more than one starting point, and the count is
/// kept in `Work` so that tests and the fuzz target can hold it to `workBound`.
public enum ImageInspector {
    public static let maximumSide = 20_000
    /// 64 megapixels: 2^26, so that a 64 MP phone sensor's 9248×6936 passes. Typical phone photos
    /// are 12 MP; the rare 108 and 200 MP modes are refused rather than served to friends' phones,
    /// which spend 4 bytes a pixel decoding them. A PNG of a few dozen bytes can declare 400 MP.
    public static let maximumPixels = 1 << 26

    /// The PNG chunks kept: the critical ones, and those that say how the pixels are displayed
    /// (transparency, gamma, primaries, colour space, ICC profile, significant bits, HDR
    /// signalling, pixel density), all fixed fields but iCCP's profile. Text, `eXIf`, `tIME` and
    /// every other chunk, unknown ones included, are dropped.
    static let pngChunksKept: Set<UInt32> = Set(
        ["IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "cICP", "pHYs"].map(fourCC))

    /// What one inspection cost; only tests and the fuzz target read it.
    struct Work {
        /// Bytes scanned or copied, segments, chunks, boxes, items, extents and IFD entries visited.
        var steps = 0
        /// TIFF structures whose IFDs were read.
        var tiffs = 0
        /// HEIF boxes read, held to `maximumBoxes`.
        var boxes = 0
    }

    /// The most work an input of `count` bytes may cost: a few passes over the bytes, plus the
    /// capped IFD reads.
    static func workBound(_ count: Int) -> Int { 8 * count + (1 << 17) }

    public static func inspect(_ data: [UInt8]) throws(ImageRefusal) -> InspectedImage {
        var work = Work()
        return try Self.inspect(data, work: &work)
    }

    static func inspect(_ data: [UInt8], work: inout Work) throws(ImageRefusal) -> InspectedImage {
        let image: InspectedImage
        if data.starts(with: [0xFF, 0xD8, 0xFF]) {
            image = try Self.jpeg(data, work: &work)
        } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            image = try Self.png(data, work: &work)
        } else if data.count >= 12, Self.u32(data, 4) == fourCC("ftyp"),
                  ["heic", "heix", "mif1", "msf1", "heim", "heis", "hevc", "hevx"].map(fourCC).contains(Self.u32(data, 8)) {
            image = try Self.heic(data, work: &work)
        } else {
            throw .notAnImage
        }
        // JPEG scan data and kept PNG chunks are copied as they are, and a HEIC is kept whole: a
        // location hidden there, or in a HEIC item the box walk does not read, is found here.
        if Self.carriesLocation(image.bytes, work: &work) { throw .embeddedLocation }
        return image
    }

    static func checkSize(_ width: Int, _ height: Int) throws(ImageRefusal) {
        guard width > 0, height > 0 else { throw .unreadable("an empty image") }
        guard width <= maximumSide, height <= maximumSide, width * height <= maximumPixels else {
            throw .tooLarge(width: width, height: height)
        }
    }

    // MARK: JPEG

    static let exifHeader: [UInt8] = Array("Exif\0\0".utf8)

    static func jpeg(_ data: [UInt8], work: inout Work) throws(ImageRefusal) -> InspectedImage {
        let n = data.count
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(n)
        var i = 2
        var width = 0, height = 0
        var orientation: UInt16?
        var sawExif = false, sawScan = false
        segments: while true {
            work.steps += 1
            guard i + 2 <= n else { throw .unreadable("no end-of-image marker") }
            guard data[i] == 0xFF else { throw .unreadable("no JPEG marker at byte \(i)") }
            let marker = data[i + 1]
            switch marker {
            case 0xFF:
                i += 1  // a fill byte
                continue
            case 0xD9:
                out += [0xFF, 0xD9]
                break segments
            case 0x01, 0xD0...0xD7:
                i += 2  // outside a scan these carry nothing a decoder needs
                continue
            case 0xD8:
                throw .unreadable("a second start-of-image marker before the end of the first image")
            default:
                break
            }
            guard i + 4 <= n else { throw .unreadable("a segment runs past the end of the file") }
            let end = i + 2 + (Int(data[i + 2]) << 8 | Int(data[i + 3]))
            guard end >= i + 4, end <= n else { throw .unreadable("a segment runs past the end of the file") }
            switch marker {
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                // One frame only, so that the size checked is the size decoded.
                guard width == 0 else { throw .unreadable("more than one frame header") }
                guard end - i >= 10 else { throw .unreadable("a short frame header") }
                height = Int(data[i + 5]) << 8 | Int(data[i + 6])
                width = Int(data[i + 7]) << 8 | Int(data[i + 8])
                try Self.checkSize(width, height)
                out += data[i..<end]
            case 0xC4, 0xCC, 0xDB, 0xDD:
                out += data[i..<end]
            case 0xDA:
                guard width > 0 else { throw .unreadable("a scan before the frame header") }
                out += data[i..<end]
                // Entropy-coded data runs to the first marker that is not stuffing (FF 00), a
                // restart (FF D0–D7) or a fill byte; progressive images have several scans with
                // tables between them, read by the next turns of the segment loop.
                var j = end
                while true {
                    guard j + 1 < n else { throw .unreadable("no end-of-image marker") }
                    if data[j] != 0xFF { j += 1; continue }
                    let next = data[j + 1]
                    if next == 0x00 || (0xD0...0xD7).contains(next) { j += 2; continue }
                    if next == 0xFF { j += 1; continue }
                    break
                }
                work.steps += j - end
                out += data[end..<j]
                sawScan = true
                i = j
                continue
            case 0xE1 where !sawExif && data[(i + 4)..<end].starts(with: Self.exifHeader):
                sawExif = true
                orientation = Self.exifOrientation(data[(i + 10)..<end], work: &work)
            default:
                break  // APPn, COM, DNL and whatever else a decoder does not need
            }
            i = end
        }
        guard width > 0 else { throw .unreadable("no frame header with the image size") }
        guard sawScan else { throw .unreadable("no image data") }
        if let orientation, (2...8).contains(orientation) {
            out.insert(contentsOf: Self.orientationSegment(orientation), at: 2)
        }
        work.steps += 2 * out.count
        return InspectedImage(format: .jpeg, width: width, height: height, bytes: out, stripped: out != data)
    }

    /// The Orientation tag (0x0112) of IFD0 of a TIFF-structured EXIF block.
    static func exifOrientation(_ tiff: ArraySlice<UInt8>, work: inout Work) -> UInt16? {
        guard let ifd = TIFF(tiff) else { return nil }
        work.tiffs += 1
        return ifd.entry(0x0112, inIFDAt: ifd.firstIFD, visited: &work.steps).map { UInt16(truncatingIfNeeded: $0.value) }
    }

    /// An APP1 segment holding a minimal little-endian EXIF with only the orientation.
    static func orientationSegment(_ orientation: UInt16) -> [UInt8] {
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]  // "II", 42, IFD0 at 8
        tiff += [0x01, 0x00]                                                     // one entry
        tiff += [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00]                 // 0x0112, SHORT, count 1
        tiff += [UInt8(orientation & 0xFF), UInt8(orientation >> 8), 0x00, 0x00] // value
        tiff += [0x00, 0x00, 0x00, 0x00]                                         // no next IFD
        let payload = Self.exifHeader + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    // MARK: PNG

    static func png(_ data: [UInt8], work: inout Work) throws(ImageRefusal) -> InspectedImage {
        let n = data.count
        var out = Array(data[0..<8])
        var i = 8
        var width = 0, height = 0
        var sawData = false
        while true {
            work.steps += 1
            guard i + 12 <= n else { throw .unreadable("no IEND chunk") }
            let length = Int(Self.u32(data, i))
            let end = i + 12 + length
            guard length <= Int(Int32.max), end <= n else { throw .unreadable("a chunk runs past the end of the file") }
            let type = Self.u32(data, i + 4)
            if i == 8 {
                guard type == fourCC("IHDR"), length == 13 else { throw .unreadable("the first chunk is not an IHDR") }
                width = Int(Self.u32(data, i + 8))
                height = Int(Self.u32(data, i + 12))
                try Self.checkSize(width, height)
            } else if type == fourCC("IHDR") {
                throw .unreadable("a second IHDR chunk")
            }
            if type == fourCC("IDAT") { sawData = true }
            if Self.pngChunksKept.contains(type) {
                work.steps += end - i
                out += data[i..<end]
            }
            i = end
            if type == fourCC("IEND") { break }
        }
        guard sawData else { throw .unreadable("no IDAT chunk") }
        // Chunks are only ever dropped, so the same length means the same bytes.
        return InspectedImage(format: .png, width: width, height: height, bytes: out, stripped: out.count != n)
    }

    // MARK: HEIC

    /// Boxes read at most in one file: a phone's HEIC has a few hundred (one item per grid tile).
    static let maximumBoxes = 1 << 16
    /// Items and extents read at most from an `iloc`.
    static let maximumItems = 1 << 14
    /// Exif items whose TIFF is read at most: a file has one.
    static let maximumExifItems = 16

    /// Where an item's bytes are: in the file (construction method 0) or in the `meta` box's
    /// `idat` (1); method 2 (bytes of other items) is left to the final scan.
    struct ItemLocation {
        var method: Int
        var extents: [(offset: Int, length: Int)]
    }

    /// The box structure is parsed rather than the bytes searched for TIFF headers: the Exif item
    /// is found by its type in `iinf` and its bytes by `iloc`, so one TIFF is read, whatever the
    /// file is made of, and the size comes from the primary item's `ispe`, not the first one met.
    /// What the structure does not declare (an Exif written into `mdat` without an item, XMP) is
    /// caught by `carriesLocation`'s single pass.
    static func heic(_ data: [UInt8], work: inout Work) throws(ImageRefusal) -> InspectedImage {
        // Readers ignore what follows the last box they understand, so a malformed tail at the top
        // level ends the walk instead of refusing the file; the final scan still reads it.
        let top = try Self.boxes(in: data, 0..<data.count, work: &work, lenient: true)
        guard let meta = top.first(where: { $0.type == fourCC("meta") }) else { throw .unreadable("no meta box") }
        var r = Reader(data: data, at: meta.start, end: meta.end)
        try r.skip(4)  // version, flags
        var primary: Int?
        var exifItems: [Int] = []
        var locations: [Int: ItemLocation] = [:]
        var properties: [Box] = []
        var associations: [Int: [Int]] = [:]
        var idat: Box?
        for child in try Self.boxes(in: data, r.at..<meta.end, work: &work) {
            switch child.type {
            case fourCC("pitm"):
                var p = Reader(data: data, at: child.start, end: child.end)
                let version = try p.uint(1)
                try p.skip(3)
                primary = try p.uint(version == 0 ? 2 : 4)
            case fourCC("iinf"):
                exifItems = try Self.exifItems(data, child, work: &work)
            case fourCC("iloc"):
                locations = try Self.itemLocations(data, child, work: &work)
            case fourCC("iprp"):
                for box in try Self.boxes(in: data, child.start..<child.end, work: &work) {
                    if box.type == fourCC("ipco") {
                        properties = try Self.boxes(in: data, box.start..<box.end, work: &work)
                    } else if box.type == fourCC("ipma") {
                        associations = try Self.propertyAssociations(data, box, work: &work)
                    }
                }
            case fourCC("idat"):
                idat = child
            default:
                break
            }
        }

        // Every image item's size is checked, not only the primary's: a decoder may decode any.
        var sizes: [Int: (width: Int, height: Int)] = [:]
        for (index, property) in properties.enumerated() where property.type == fourCC("ispe") {
            var p = Reader(data: data, at: property.start, end: property.end)
            try p.skip(4)
            let width = try p.uint(4), height = try p.uint(4)
            try Self.checkSize(width, height)
            sizes[index + 1] = (width, height)
        }
        let primarySize = primary.flatMap { associations[$0] }?.lazy.compactMap { sizes[$0] }.first
        guard let size = primarySize ?? sizes.min(by: { $0.key < $1.key })?.value else { throw .unreadable("no ispe property") }

        var joinedBytes = 0
        for id in exifItems.prefix(Self.maximumExifItems) {
            guard let location = locations[id], location.method <= 1 else { continue }
            let source = location.method == 0 ? 0..<data.count : (idat.map { $0.start..<$0.end } ?? 0..<0)
            // One extent (the usual case) is a slice of the file; several are joined.
            var single: ArraySlice<UInt8>?
            var joined: [UInt8] = []
            for extent in location.extents {
                let start = source.lowerBound + extent.offset
                let end = extent.length == 0 ? source.upperBound : start + extent.length
                guard extent.offset <= source.count, start <= end, end <= source.upperBound else { throw .unreadable("an Exif item outside the file") }
                work.steps += 1
                if location.extents.count == 1 {
                    single = data[start..<end]
                } else {
                    // Extents may overlap and name the same bytes many times over.
                    joinedBytes += end - start
                    guard joinedBytes <= data.count else { throw .unreadable("Exif items larger than the file") }
                    work.steps += end - start
                    joined += data[start..<end]
                }
            }
            if Self.exifHasGPS(single ?? joined[...], work: &work) { throw .embeddedLocation }
        }
        return InspectedImage(format: .heic, width: size.width, height: size.height, bytes: data, stripped: false)
    }

    /// An Exif item: a 4-byte offset to the TIFF header, which some encoders place after an
    /// "Exif\0\0" prefix they do not count.
    static func exifHasGPS(_ item: ArraySlice<UInt8>, work: inout Work) -> Bool {
        guard item.count >= 4 else { return false }
        let skip = Int(Self.u32(item, item.startIndex))
        guard skip <= item.count - 4 else { return false }
        var tiff = item.dropFirst(4 + skip)
        if tiff.starts(with: Self.exifHeader) { tiff = tiff.dropFirst(6) }
        guard let ifd = TIFF(tiff) else { return false }
        work.tiffs += 1
        return ifd.hasGPS(visited: &work.steps)
    }

    /// An ISOBMFF box: its type and its payload's place in the file.
    struct Box {
        var type: UInt32
        var start: Int
        var end: Int
    }

    /// The boxes that tile `range`; `lenient` stops at one that does not fit instead of refusing.
    static func boxes(in data: [UInt8], _ range: Range<Int>, work: inout Work, lenient: Bool = false) throws(ImageRefusal) -> [Box] {
        var result: [Box] = []
        var i = range.lowerBound
        while i < range.upperBound {
            work.steps += 1
            work.boxes += 1
            guard work.boxes <= Self.maximumBoxes else { throw .unreadable("more than \(Self.maximumBoxes) boxes") }
            var r = Reader(data: data, at: i, end: range.upperBound)
            guard let declared = try? r.uint(4), let type = try? r.uint(4) else {
                if lenient { break }
                throw .unreadable("a box runs past its parent")
            }
            var size = declared
            if declared == 1 {
                guard let large = try? r.uint(8) else {
                    if lenient { break }
                    throw .unreadable("a box runs past its parent")
                }
                size = large
            } else if declared == 0 {
                size = range.upperBound - i
            }
            guard size >= r.at - i, size <= range.upperBound - i else {
                if lenient { break }
                throw .unreadable("a box runs past its parent")
            }
            result.append(Box(type: UInt32(type), start: r.at, end: i + size))
            i += size
        }
        return result
    }

    /// The IDs of the `iinf` entries whose type is Exif.
    static func exifItems(_ data: [UInt8], _ iinf: Box, work: inout Work) throws(ImageRefusal) -> [Int] {
        var r = Reader(data: data, at: iinf.start, end: iinf.end)
        let version = try r.uint(1)
        try r.skip(3)
        _ = try r.uint(version == 0 ? 2 : 4)  // the entry count: the boxes that follow are the entries
        var ids: [Int] = []
        for infe in try Self.boxes(in: data, r.at..<iinf.end, work: &work) where infe.type == fourCC("infe") {
            var e = Reader(data: data, at: infe.start, end: infe.end)
            let version = try e.uint(1)
            guard version >= 2 else { continue }  // versions 0 and 1 have no item type
            try e.skip(3)
            let id = try e.uint(version == 2 ? 2 : 4)
            try e.skip(2)
            if try e.uint(4) == Int(fourCC("Exif")) { ids.append(id) }
        }
        return ids
    }

    /// The `iloc` box: each item's extents, base offset included.
    static func itemLocations(_ data: [UInt8], _ iloc: Box, work: inout Work) throws(ImageRefusal) -> [Int: ItemLocation] {
        var r = Reader(data: data, at: iloc.start, end: iloc.end)
        let version = try r.uint(1)
        guard version <= 2 else { throw .unreadable("an iloc box of version \(version)") }
        try r.skip(3)
        let sizes = try r.uint(1), more = try r.uint(1)
        let offsetSize = sizes >> 4, lengthSize = sizes & 15, baseSize = more >> 4
        let indexSize = version == 0 ? 0 : more & 15
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }) else {
            throw .unreadable("an iloc box with field sizes other than 0, 4 or 8")
        }
        let count = try r.uint(version < 2 ? 2 : 4)
        guard count <= Self.maximumItems else { throw .unreadable("more than \(Self.maximumItems) items") }
        var locations: [Int: ItemLocation] = [:]
        var extentsRead = 0
        for _ in 0..<count {
            let id = try r.uint(version < 2 ? 2 : 4)
            let method = try version == 0 ? 0 : r.uint(2) & 15
            try r.skip(2)  // data reference index
            let base = try r.uint(baseSize)
            let extentCount = try r.uint(2)
            // With field sizes of 0 an extent takes no bytes, so the count alone must be capped.
            extentsRead += extentCount
            work.steps += 1 + extentCount
            guard extentsRead <= Self.maximumItems else { throw .unreadable("more than \(Self.maximumItems) extents") }
            var extents: [(offset: Int, length: Int)] = []
            for _ in 0..<extentCount {
                try r.skip(indexSize)
                let offset = try r.uint(offsetSize)
                let length = try r.uint(lengthSize)
                guard base <= data.count, offset <= data.count else { throw .unreadable("an item outside the file") }
                extents.append((base + offset, length))
            }
            locations[id] = ItemLocation(method: method, extents: extents)
        }
        return locations
    }

    /// The `ipma` box: each item's property indexes (1-based into `ipco`).
    static func propertyAssociations(_ data: [UInt8], _ ipma: Box, work: inout Work) throws(ImageRefusal) -> [Int: [Int]] {
        var r = Reader(data: data, at: ipma.start, end: ipma.end)
        let version = try r.uint(1)
        let flags = try r.uint(3)
        let count = try r.uint(4)
        var associations: [Int: [Int]] = [:]
        // Each entry takes at least three bytes, so the loop ends with the box whatever `count` says.
        for _ in 0..<min(count, Self.maximumItems) {
            let id = try r.uint(version < 1 ? 2 : 4)
            let n = try r.uint(1)
            work.steps += 1 + n
            var indexes: [Int] = []
            for _ in 0..<n {
                try indexes.append(flags & 1 == 1 ? r.uint(2) & 0x7FFF : r.uint(1) & 0x7F)
            }
            associations[id] = indexes
        }
        return associations
    }

    // MARK: Locations left anywhere

    static let gpsNames: [[UInt8]] = ["Latitude", "Longitude", "DestLatitude", "DestLongitude"].map { Array($0.utf8) }

    /// Whether a location is left anywhere in the bytes: an EXIF GPS IFD pointer (tag 0x8825,
    /// LONG or IFD, count 1) after a TIFF header of its byte order, or an XMP GPS coordinate
    /// ("GPSLatitude" and the like, as element or attribute).
    ///
    /// One pass, a constant number of comparisons a byte. It does not follow each TIFF header to
    /// check that the pointer is in its first IFD and that the GPS IFD has entries: that would
    /// read IFDs from every header, quadratic for a file made of headers. Being conservative
    /// costs little: these 8 bytes turn up in compressed image data about once in 2^60 bytes, and
    /// an EXIF with an empty GPS IFD is rare.
    static func carriesLocation(_ bytes: [UInt8], work: inout Work) -> Bool {
        work.steps += bytes.count
        return bytes.withUnsafeBufferPointer { b in
            let n = b.count
            var afterBigEndianHeader = false, afterLittleEndianHeader = false
            for i in 0..<n {
                switch b[i] {
                case 0x88 where afterBigEndianHeader && i + 8 <= n:
                    if b[i + 1] == 0x25, b[i + 2] == 0, b[i + 3] == 4 || b[i + 3] == 13, b[i + 4] == 0, b[i + 5] == 0, b[i + 6] == 0, b[i + 7] == 1 {
                        return true
                    }
                case 0x25 where afterLittleEndianHeader && i + 8 <= n:
                    if b[i + 1] == 0x88, b[i + 2] == 4 || b[i + 2] == 13, b[i + 3] == 0, b[i + 4] == 1, b[i + 5] == 0, b[i + 6] == 0, b[i + 7] == 0 {
                        return true
                    }
                case 0x4D where i + 4 <= n:
                    if b[i + 1] == 0x4D, b[i + 2] == 0, b[i + 3] == 0x2A { afterBigEndianHeader = true }
                case 0x49 where i + 4 <= n:
                    if b[i + 1] == 0x49, b[i + 2] == 0x2A, b[i + 3] == 0 { afterLittleEndianHeader = true }
                case 0x47 where i + 11 <= n:  // "GPS…"
                    guard b[i + 1] == 0x50, b[i + 2] == 0x53 else { break }
                    for name in Self.gpsNames where i + 3 + name.count <= n {
                        if name.indices.allSatisfy({ b[i + 3 + $0] == name[$0] }) { return true }
                    }
                default:
                    break
                }
            }
            return false
        }
    }

    // MARK: Bytes

    static func fourCC(_ code: String) -> UInt32 {
        code.utf8.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The big-endian UInt32 at `at`, which the caller has checked is in bounds.
    static func u32<Bytes: RandomAccessCollection<UInt8>>(_ data: Bytes, _ at: Int) -> UInt32 where Bytes.Index == Int {
        UInt32(data[at]) << 24 | UInt32(data[at + 1]) << 16 | UInt32(data[at + 2]) << 8 | UInt32(data[at + 3])
    }

    /// Big-endian fields of part of the file, bounds-checked: reading past `end` refuses the image.
    struct Reader {
        let data: [UInt8]
        var at: Int
        let end: Int

        /// An unsigned field of `size` bytes (0 to 8; 0 reads nothing and gives 0).
        mutating func uint(_ size: Int) throws(ImageRefusal) -> Int {
            guard size >= 0, size <= 8, self.at <= self.end - size else { throw .unreadable("a box ends early") }
            var value: UInt64 = 0
            for k in 0..<size { value = value << 8 | UInt64(self.data[self.at + k]) }
            guard value <= UInt64(Int32.max) * 4 else { throw .unreadable("a field too large for a 10 MiB file") }
            self.at += size
            return Int(value)
        }

        mutating func skip(_ count: Int) throws(ImageRefusal) {
            guard count >= 0, self.at <= self.end - count else { throw .unreadable("a box ends early") }
            self.at += count
        }
    }
}

/// Just enough TIFF to read IFD entries safely: over a slice of the file (offsets count from the
/// slice's start, nothing is copied), bounds-checked; garbage gives nothing.
struct TIFF {
    struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        /// The value for SHORT/LONG with count 1, else the offset.
        var value: UInt32
    }

    /// Entries read at most from one IFD: real ones hold a few dozen, and a forged count (up to
    /// 65,535) must not cost more than a constant.
    static let maximumEntries = 1000

    let bytes: ArraySlice<UInt8>
    let little: Bool
    private(set) var firstIFD: Int

    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 8 else { return nil }
        let s = bytes.startIndex
        if bytes[s] == 0x49, bytes[s + 1] == 0x49 {
            self.little = true
        } else if bytes[s] == 0x4D, bytes[s + 1] == 0x4D {
            self.little = false
        } else {
            return nil
        }
        self.bytes = bytes
        self.firstIFD = 0
        guard self.u16(2) == 42, let first = self.u32(4) else { return nil }
        self.firstIFD = Int(first)
    }

    func u16(_ at: Int) -> UInt16? {
        guard at >= 0, at <= self.bytes.count - 2 else { return nil }
        let p = self.bytes.startIndex + at
        let a = UInt16(self.bytes[p]), b = UInt16(self.bytes[p + 1])
        return self.little ? a | b << 8 : a << 8 | b
    }

    func u32(_ at: Int) -> UInt32? {
        guard at >= 0, at <= self.bytes.count - 4 else { return nil }
        let p = self.bytes.startIndex + at
        let b0 = UInt32(self.bytes[p]), b1 = UInt32(self.bytes[p + 1]), b2 = UInt32(self.bytes[p + 2]), b3 = UInt32(self.bytes[p + 3])
        return self.little ? b0 | b1 << 8 | b2 << 16 | b3 << 24 : b0 << 24 | b1 << 16 | b2 << 8 | b3
    }

    /// The first entry with `tag` in the IFD at `offset`; `visited` counts the entries read.
    func entry(_ tag: UInt16, inIFDAt offset: Int, visited: inout Int) -> Entry? {
        guard let n = self.u16(offset) else { return nil }
        for k in 0..<min(Int(n), Self.maximumEntries) {
            visited += 1
            let e = offset + 2 + 12 * k
            guard let found = self.u16(e), let type = self.u16(e + 2), let count = self.u32(e + 4) else { return nil }
            guard found == tag else { continue }
            let value: UInt32? = type == 3 && count == 1 ? self.u16(e + 8).map(UInt32.init) : self.u32(e + 8)
            return value.map { Entry(tag: found, type: type, count: count, value: $0) }
        }
        return nil
    }

    /// IFD0 points at a GPS IFD (tag 0x8825) that holds at least one entry.
    func hasGPS(visited: inout Int) -> Bool {
        guard let gps = self.entry(0x8825, inIFDAt: self.firstIFD, visited: &visited) else { return false }
        return (self.u16(Int(gps.value)) ?? 0) > 0
    }
}
