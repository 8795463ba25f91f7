@testable import CoasterCore
import Foundation
import Testing

/// Leaks of a location through an uploaded photo, each built in code from the place it was found,
/// and the real files of Tests/CoasterAPITests/Data (made by real encoders, see its README).
@Suite("Image inspector")
struct ImageInspectorTests {
    static let data = Fixtures.repoRoot.appendingPathComponent("Tests/CoasterAPITests/Data")

    static func file(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.data.appendingPathComponent(name)))
    }

    static func inspect(_ bytes: [UInt8]) throws -> (InspectedImage, ImageInspector.Work) {
        var work = ImageInspector.Work()
        let image = try ImageInspector.inspect(bytes, work: &work)
        #expect(work.steps <= ImageInspector.workBound(bytes.count))
        return (image, work)
    }

    /// The location-finding helpers find what the tests below say is gone.
    @Test func theLocationProbeFindsTheLocationsBuiltHere() throws {
        #expect(Location.carried(by: try Self.file("coaster-gps.jpg")))
        #expect(Location.carried(by: try Self.file("coaster-gps.heic")))
        for bigEndian in [true, false] {
            #expect(Location.carried(by: [0x00] + ImageBytes.gpsTIFF(bigEndian: bigEndian) + [0x00]))
        }
        #expect(Location.carried(by: ImageBytes.xmp))
        #expect(!Location.carried(by: ImageBytes.jpeg()))
        #expect(!Location.carried(by: ImageBytes.orientationOnlyTIFF))
    }

    // MARK: JPEG

    @Test func aSecondPictureAfterTheEndOfTheFirstIsDropped() throws {
        let first = ImageBytes.jpeg(before: [ImageBytes.exifSegment(ImageBytes.gpsTIFF(bigEndian: true))])
        let second = ImageBytes.jpeg(before: [ImageBytes.exifSegment(ImageBytes.gpsTIFF(bigEndian: false)), ImageBytes.xmpSegment])
        let (image, _) = try Self.inspect(first + second)
        #expect(image.format == .jpeg && image.width == 16 && image.height == 8 && image.stripped)
        let walk = try #require(JPEGWalk(image.bytes))
        #expect(walk.end == image.bytes.count, "bytes after the first end-of-image marker")
        #expect(walk.markers == [0xD8, 0xE1, 0xDB, 0xC0, 0xC4, 0xDA, 0xD9])
        #expect(!Location.carried(by: image.bytes))
        #expect(image.bytes.count < first.count)
    }

    @Test func anEXIFSegmentBetweenTheScanAndTheEndIsDropped() throws {
        let jpeg = ImageBytes.jpeg(afterScan: [ImageBytes.exifSegment(ImageBytes.gpsTIFF(bigEndian: true))])
        #expect(Location.carried(by: jpeg))
        let (image, _) = try Self.inspect(jpeg)
        #expect(!Location.carried(by: image.bytes))
        #expect(JPEGWalk(image.bytes)?.markers == [0xD8, 0xE1, 0xDB, 0xC0, 0xC4, 0xDA, 0xD9])
    }

    /// Any APPn can hold EXIF or XMP; APP3 and APP2 are where some cameras and tools put them.
    @Test(arguments: [0xE3, 0xE2, 0xE0, 0xEF] as [UInt8])
    func anEXIFInAnyApplicationSegmentIsDropped(_ marker: UInt8) throws {
        let payload = ImageBytes.exifHeader + ImageBytes.gpsTIFF(bigEndian: false)
        let jpeg = ImageBytes.jpeg(before: [ImageBytes.segment(marker, payload), ImageBytes.segment(0xFE, ImageBytes.xmp)])
        let (image, _) = try Self.inspect(jpeg)
        #expect(!Location.carried(by: image.bytes))
        #expect(image.stripped)
        #expect(JPEGWalk(image.bytes)?.markers == [0xD8, 0xDB, 0xC0, 0xC4, 0xDA, 0xD9])
    }

    /// A progressive JPEG's later scans and the tables between them are kept; restart markers and
    /// stuffed bytes inside the scans do not end them.
    @Test func aProgressiveJPEGKeepsEveryScan() throws {
        let jpeg = ImageBytes.jpeg(before: [ImageBytes.exifSegment(ImageBytes.gpsTIFF(bigEndian: true))], frame: 0xC2, scans: 3)
        let (image, _) = try Self.inspect(jpeg)
        #expect(JPEGWalk(image.bytes)?.markers == [0xD8, 0xE1, 0xDB, 0xC2, 0xC4, 0xDA, 0xC4, 0xDA, 0xC4, 0xDA, 0xD9])
        #expect(ImageBytes.contains(image.bytes, ImageBytes.scanData))
        // Cleaning what is clean changes nothing.
        let (again, _) = try Self.inspect(image.bytes)
        #expect(again.bytes == image.bytes && !again.stripped)
    }

    @Test(arguments: [
        ("no end-of-image marker", Array(ImageBytes.jpeg().dropLast(2))),
        ("no scan", ImageBytes.segments([ImageBytes.soi, ImageBytes.dqt, ImageBytes.sof(0xC0, 16, 8), ImageBytes.eoi])),
        ("no frame header", ImageBytes.segments([ImageBytes.soi, ImageBytes.dqt, ImageBytes.dht, ImageBytes.sos, ImageBytes.scanData, ImageBytes.eoi])),
        ("two frame headers", ImageBytes.segments([ImageBytes.soi, ImageBytes.sof(0xC0, 16, 8), ImageBytes.sof(0xC0, 9000, 9000), ImageBytes.eoi])),
        ("a truncated scan", Array(ImageBytes.jpeg().prefix(ImageBytes.jpeg().count - 6))),
    ] as [(String, [UInt8])])
    func aJPEGThatCannotBeDecodedIsRefused(_ why: String, _ bytes: [UInt8]) {
        #expect(throws: ImageRefusal.self, "\(why)") { try ImageInspector.inspect(bytes) }
    }

    // MARK: PNG

    @Test func aPNGKeepsOnlyWhatDisplayNeeds() throws {
        let png = ImageBytes.png(width: 4, height: 3, extra: [
            ImageBytes.chunk("eXIf", ImageBytes.gpsTIFF(bigEndian: true)),
            ImageBytes.chunk("tEXt", Array("XML:com.adobe.xmp\0".utf8) + ImageBytes.xmp),
            ImageBytes.chunk("tIME", [0x07, 0xEA, 6, 10, 12, 0, 0]),
            ImageBytes.chunk("gAMA", [0, 0, 0xB1, 0x8F]),
        ], after: ImageBytes.chunk("exIf", ImageBytes.gpsTIFF(bigEndian: false)) + ImageBytes.xmp)
        #expect(Location.carried(by: png))
        let (image, _) = try Self.inspect(png)
        #expect(image.format == .png && image.width == 4 && image.height == 3 && image.stripped)
        #expect(PNGWalk.types(image.bytes) == ["IHDR", "gAMA", "IDAT", "IEND"])
        #expect(PNGWalk.end(image.bytes) == image.bytes.count, "bytes after IEND")
        #expect(!Location.carried(by: image.bytes))
    }

    @Test func aPNGMustStartWithItsHeader() {
        let png = ImageBytes.png(width: 4, height: 3)
        let ihdr = Array(png[8..<33]), rest = Array(png[33...])
        let misplaced = Array(png[0..<8]) + ImageBytes.chunk("gAMA", [0, 0, 0xB1, 0x8F]) + ihdr + rest
        #expect(throws: ImageRefusal.self) { try ImageInspector.inspect(misplaced) }
        #expect(throws: ImageRefusal.self) { try ImageInspector.inspect(Array(png.dropLast(12))) }
    }

    // MARK: Size

    @Test func aTinyPNGDeclaring400MegapixelsIsRefused() throws {
        let png = ImageBytes.png(width: 20_000, height: 20_000)
        #expect(png.count == 73)
        #expect(throws: ImageRefusal.tooLarge(width: 20_000, height: 20_000)) { try ImageInspector.inspect(png) }
    }

    /// 64 MP is 2^26 pixels: a 64 MP phone sensor's 9248×6936 passes, 108 MP does not.
    @Test(arguments: [
        (9248, 6936, true), (8192, 8192, true), (4032, 3024, true), (20_000, 3355, true),
        (8193, 8192, false), (12_000, 9000, false), (20_001, 10, false), (10, 20_001, false),
    ])
    func everyFormatIsHeldToTheSameSizes(_ width: Int, _ height: Int, _ accepted: Bool) {
        for bytes in [ImageBytes.png(width: width, height: height), ImageBytes.jpeg(width: width, height: height),
                      ImageBytes.heic(width: width, height: height)] {
            if accepted {
                #expect((try? ImageInspector.inspect(bytes))?.width == width)
            } else {
                #expect(throws: ImageRefusal.tooLarge(width: width, height: height)) { try ImageInspector.inspect(bytes) }
            }
        }
    }

    // MARK: HEIC

    /// A HEIC whose data is four-byte TIFF headers end to end: one read of the bytes, no TIFF
    /// followed from any of them.
    @Test func aHEICFullOfTIFFHeadersCostsOnePass() throws {
        let magic: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A]
        let filler = Array((0..<(1 << 18)).map { _ in magic }.joined())
        let (image, work) = try Self.inspect(ImageBytes.heic(width: 64, height: 64, mdatTail: filler))
        #expect(image.format == .heic && image.width == 64 && image.height == 64)
        #expect(work.tiffs == 0)
        #expect(work.steps <= 3 * (1 << 20))
        // The same without a box structure, as first reported: ftyp, a loose ispe, the headers.
        let loose = ImageBytes.box("ftyp", Array("heic\0\0\0\0mif1heic".utf8))
            + ImageBytes.fullBox("ispe", ImageBytes.be32(64) + ImageBytes.be32(64)) + filler
        var looseWork = ImageInspector.Work()
        #expect(throws: ImageRefusal.unreadable("no meta box")) { try ImageInspector.inspect(loose, work: &looseWork) }
        #expect(looseWork.tiffs == 0 && looseWork.steps <= ImageInspector.workBound(loose.count))
    }

    /// Thousands of Exif items naming one IFD of 999 entries: a capped number of TIFFs is read.
    @Test func manyExifItemsReadACappedNumberOfTIFFs() throws {
        var tiff = [0x4D, 0x4D, 0x00, 0x2A] + ImageBytes.be32(8) + ImageBytes.be16(999)
        for k in 0..<999 { tiff += ImageBytes.be16(0x9000 + k) + [0, 3] + ImageBytes.be32(1) + [0, 1, 0, 0] }
        let heic = ImageBytes.heic(width: 64, height: 64, exif: [0, 0, 0, 0] + tiff, exifItems: 4000)
        let (_, work) = try Self.inspect(heic)
        #expect(work.tiffs == ImageInspector.maximumExifItems)
    }

    /// Found by the box structure alone: the Exif item is in two extents, stored in reverse order
    /// and split inside the GPS pointer, so no byte search can see it.
    @Test func aHEICWithGPSInASplitExifItemIsRefused() throws {
        let exif = [0, 0, 0, 0] + ImageBytes.gpsTIFF(bigEndian: true)
        let heic = ImageBytes.heic(width: 64, height: 64, exif: exif, splitExifAt: 4 + 8 + 2 + 12 + 4)
        var scanWork = ImageInspector.Work()
        #expect(!ImageInspector.carriesLocation(heic, work: &scanWork))
        var work = ImageInspector.Work()
        #expect(throws: ImageRefusal.embeddedLocation) { try ImageInspector.inspect(heic, work: &work) }
        #expect(work.tiffs == 1)
        // An Exif item without GPS is read and accepted.
        let (_, clean) = try Self.inspect(ImageBytes.heic(width: 64, height: 64, exif: [0, 0, 0, 0] + ImageBytes.orientationOnlyTIFF))
        #expect(clean.tiffs == 1)
    }

    /// Found by the final scan: a TIFF with GPS, or XMP with GPS, in the data without an item
    /// that declares it.
    @Test(arguments: [true, false])
    func aHEICWithGPSWhereNoItemSaysIsRefused(_ tiff: Bool) {
        let hidden = tiff ? ImageBytes.gpsTIFF(bigEndian: false) : ImageBytes.xmp
        let heic = ImageBytes.heic(width: 64, height: 64, mdatTail: hidden)
        var work = ImageInspector.Work()
        #expect(throws: ImageRefusal.embeddedLocation) { try ImageInspector.inspect(heic, work: &work) }
        #expect(work.tiffs == 0)
    }

    // MARK: Real files

    @Test func realFilesAreCleanedAndStillDecode() throws {
        let (jpeg, _) = try Self.inspect(try Self.file("coaster-gps.jpg"))
        #expect(jpeg.format == .jpeg && jpeg.width == 320 && jpeg.height == 240 && jpeg.stripped)
        #expect(!Location.carried(by: jpeg.bytes))
        // The orientation (6: rotate 90° clockwise) is kept so the photo still shows upright.
        #expect(ImageBytes.contains(jpeg.bytes, [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00]))
        let walk = try #require(JPEGWalk(jpeg.bytes))
        #expect(walk.end == jpeg.bytes.count)
        #expect(walk.markers.first == 0xD8 && walk.markers.last == 0xD9)
        #expect(walk.markers.filter { $0 == 0xC0 }.count == 1 && walk.markers.contains(0xDA))
        #expect(walk.markers.allSatisfy { [0xD8, 0xE1, 0xDB, 0xC0, 0xC4, 0xDA, 0xD9].contains($0) })
        #expect(walk.scanBytes > 15_000)

        let (png, _) = try Self.inspect(try Self.file("coaster.png"))
        #expect(png.format == .png && png.width == 320 && png.height == 240 && png.stripped)
        #expect(!ImageBytes.contains(png.bytes, Array("eXIf".utf8)) && !Location.carried(by: png.bytes))
        #expect(PNGWalk.types(png.bytes).first == "IHDR" && PNGWalk.end(png.bytes) == png.bytes.count)

        let (heic, _) = try Self.inspect(try Self.file("coaster.heic"))
        #expect(heic.format == .heic && heic.width == 320 && heic.height == 240 && !heic.stripped)
        var work = ImageInspector.Work()
        #expect(throws: ImageRefusal.embeddedLocation) { try ImageInspector.inspect(try Self.file("coaster-gps.heic"), work: &work) }
        #expect(work.tiffs == 1, "found through its Exif item")

        for image in [jpeg, png, heic] {
            let (again, _) = try Self.inspect(image.bytes)
            #expect(again == InspectedImage(format: image.format, width: image.width, height: image.height, bytes: image.bytes, stripped: false))
        }
    }
}

/// Whether bytes carry a location, read independently of the inspector: every TIFF header's IFD0
/// is read for a GPS pointer, and XMP GPS properties are searched for.
enum Location {
    static func carried(by bytes: [UInt8]) -> Bool {
        for name in ["GPSLatitude", "GPSLongitude", "exif:GPS"] where ImageBytes.contains(bytes, Array(name.utf8)) { return true }
        for h in bytes.indices.dropLast(7) {
            let little: Bool
            if bytes[h...].starts(with: [0x49, 0x49, 0x2A, 0x00]) { little = true } else if bytes[h...].starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { little = false } else { continue }
            func read(_ at: Int, _ size: Int) -> Int? {
                guard at >= 0, h + at + size <= bytes.count else { return nil }
                let b = bytes[(h + at)..<(h + at + size)]
                return (little ? b.reversed() : Array(b)).reduce(0) { $0 << 8 | Int($1) }
            }
            guard let ifd = read(4, 4), let count = read(ifd, 2) else { continue }
            for k in 0..<count where read(ifd + 2 + 12 * k, 2) == 0x8825 { return true }
        }
        return false
    }
}

/// The markers of a JPEG as a decoder meets them, scans walked byte by byte.
struct JPEGWalk {
    var markers: [UInt8] = []
    /// Where the walk stopped: just after the first end-of-image marker.
    var end = 0
    var scanBytes = 0

    init?(_ b: [UInt8]) {
        guard b.starts(with: [0xFF, 0xD8]) else { return nil }
        self.markers = [0xD8]
        var i = 2
        while i + 1 < b.count, b[i] == 0xFF {
            let m = b[i + 1]
            self.markers.append(m)
            if m == 0xD9 { self.end = i + 2; return }
            guard i + 3 < b.count else { return nil }
            i += 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3]))
            guard m == 0xDA else { continue }
            let start = i
            while i + 1 < b.count, b[i] != 0xFF || b[i + 1] == 0 || (0xD0...0xD7).contains(b[i + 1]) { i += b[i] == 0xFF ? 2 : 1 }
            self.scanBytes += i - start
        }
        return nil
    }
}

enum PNGWalk {
    static func chunks(_ b: [UInt8]) -> [(type: String, end: Int)] {
        var result: [(String, Int)] = []
        var i = 8
        while i + 12 <= b.count {
            let length = b[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            i += 12 + length
            result.append((type, i))
            if type == "IEND" { break }
        }
        return result
    }

    static func types(_ b: [UInt8]) -> [String] { Self.chunks(b).map(\.type) }

    /// Where the first IEND chunk ends.
    static func end(_ b: [UInt8]) -> Int? { Self.chunks(b).first { $0.type == "IEND" }?.end }
}

/// Test images built byte by byte: JPEG segments, PNG chunks with their CRCs, HEIF boxes, EXIF.
enum ImageBytes {
    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0...].starts(with: needle) }
    }

    // MARK: EXIF and XMP

    static let exifHeader: [UInt8] = Array("Exif\0\0".utf8)

    /// EXIF as cameras write it: IFD0 with the orientation (6) and a GPS pointer; the GPS IFD with
    /// a latitude (41° 28' 54" N).
    static func gpsTIFF(bigEndian: Bool) -> [UInt8] {
        let e16 = { (v: Int) in bigEndian ? be16(v) : be16(v).reversed() }
        let e32 = { (v: Int) in bigEndian ? be32(v) : be32(v).reversed() }
        var t: [UInt8] = bigEndian ? [0x4D, 0x4D, 0x00, 0x2A] : [0x49, 0x49, 0x2A, 0x00]
        t += e32(8) + e16(2)
        t += e16(0x0112) + e16(3) + e32(1) + e16(6) + [0, 0]
        t += e16(0x8825) + e16(4) + e32(1) + e32(38)
        t += e32(0)
        // The GPS IFD, at 38.
        t += e16(2)
        t += e16(0x0001) + e16(2) + e32(2) + Array("N\0\0\0".utf8)
        t += e16(0x0002) + e16(5) + e32(3) + e32(68)
        t += e32(0)
        t += e32(41) + e32(1) + e32(28) + e32(1) + e32(5400) + e32(100)
        return t
    }

    static let orientationOnlyTIFF = Array(ImageInspector.orientationSegment(6).dropFirst(10))

    static let xmp = Array("""
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="41,28.8994N" \
        exif:GPSLongitude="82,41.2879W"/></rdf:RDF></x:xmpmeta>
        """.utf8)

    // MARK: JPEG

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] { [0xFF, marker] + be16(payload.count + 2) + payload }
    static func exifSegment(_ tiff: [UInt8]) -> [UInt8] { segment(0xE1, exifHeader + tiff) }
    static let xmpSegment = segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp)
    static let soi: [UInt8] = [0xFF, 0xD8]
    static let eoi: [UInt8] = [0xFF, 0xD9]
    static let jfif = segment(0xE0, Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])
    static let dqt = segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
    static func sof(_ marker: UInt8, _ width: Int, _ height: Int) -> [UInt8] {
        segment(marker, [8] + be16(height) + be16(width) + [1, 1, 0x11, 0])
    }
    static let dht = segment(0xC4, [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0])
    static let sos = segment(0xDA, [1, 1, 0x00, 0, 63, 0])
    /// Entropy-coded bytes with a stuffed FF and a restart marker inside.
    static let scanData: [UInt8] = [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0x78, 0xFF, 0x00]

    static func segments(_ parts: [[UInt8]]) -> [UInt8] { Array(parts.joined()) }

    static func jpeg(width: Int = 16, height: Int = 8, before: [[UInt8]] = [], afterScan: [[UInt8]] = [],
                     frame: UInt8 = 0xC0, scans: Int = 1) -> [UInt8] {
        var parts = [soi, jfif] + before + [dqt, sof(frame, width, height)]
        for _ in 0..<scans { parts += [dht, sos, scanData] }
        return segments(parts + afterScan + [eoi])
    }

    // MARK: PNG

    static let crcTable: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crcTable[Int(($0 ^ UInt32($1)) & 0xFF)] ^ ($0 >> 8) }
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(data.count) + body + be32(Int(crc32(body)))
    }

    /// IHDR (8-bit RGB), the given chunks, one IDAT of 16 bytes, IEND, then `after`.
    static func png(width: Int, height: Int, extra: [[UInt8]] = [], after: [UInt8] = []) -> [UInt8] {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
        let idat = chunk("IDAT", [0x78, 0x9C, 0x63, 0x60, 0x18, 0x05, 0xA3, 0x60, 0x14, 0x0C, 0x77, 0x00, 0x00, 0x01, 0x2C, 0x00])
        return signature + ihdr + Array(extra.joined()) + idat + chunk("IEND", []) + after
    }

    // MARK: HEIC

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + Array(type.utf8) + payload }
    static func fullBox(_ type: String, version: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }

    /// A HEIC: item 1 a (fake) HEVC image with an `ispe` of width×height, then `exifItems` Exif
    /// items all naming the bytes `exif` (in two extents, swapped in the file, if `splitExifAt`),
    /// then `mdatTail` at the end of `mdat`.
    static func heic(width: Int, height: Int, exif: [UInt8]? = nil, exifItems: Int = 1, splitExifAt: Int? = nil,
                     mdatTail: [UInt8] = []) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic\0\0\0\0mif1heic".utf8))
        let image = [UInt8](repeating: 0x26, count: 32)
        let exifCount = exif == nil ? 0 : exifItems
        func meta(_ mdat: Int) -> [UInt8] {
            let hdlr = fullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
            var infes = fullBox("infe", version: 2, be16(1) + be16(0) + Array("hvc1\0".utf8))
            var locations = be16(1) + be16(0) + be16(1) + be32(mdat) + be32(image.count)
            for k in 0..<exifCount {
                infes += fullBox("infe", version: 2, be16(2 + k) + be16(0) + Array("Exif\0".utf8))
                let exifAt = mdat + image.count
                if let split = splitExifAt, let exif {
                    let tail = exif.count - split
                    locations += be16(2 + k) + be16(0) + be16(2) + be32(exifAt + tail) + be32(split) + be32(exifAt) + be32(tail)
                } else {
                    locations += be16(2 + k) + be16(0) + be16(1) + be32(exifAt) + be32(exif?.count ?? 0)
                }
            }
            let iinf = fullBox("iinf", be16(1 + exifCount) + infes)
            let iloc = fullBox("iloc", [0x44, 0x00] + be16(1 + exifCount) + locations)
            let ispe = fullBox("ispe", be32(width) + be32(height))
            let iprp = box("iprp", box("ipco", ispe) + fullBox("ipma", be32(1) + be16(1) + [1, 0x81]))
            return fullBox("meta", hdlr + fullBox("pitm", be16(1)) + iinf + iloc + iprp)
        }
        let mdatStart = ftyp.count + meta(0).count + 8
        var stored = exif ?? []
        if let split = splitExifAt { stored = Array(stored[split...] + stored[..<split]) }
        return ftyp + meta(mdatStart) + box("mdat", image + stored + mdatTail)
    }
}
