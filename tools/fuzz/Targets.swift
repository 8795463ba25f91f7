// libFuzzer entry for CoasterLife's pure decoders and validators. Built by tools/fuzz/run together
// with CoasterCore's sources, the OwnTracks decoder and the fix body's readers, with
// -sanitize=fuzzer,address.
// FUZZ_TARGET picks what the input bytes go to; each must return (or throw), never crash.
import Foundation

private let target = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "park-import"

/// The real parks, for targets that need fences (loaded once).
private let fences: FenceIndex = {
    let names = ["cedar-point", "kings-island", "six-flags-fiesta-texas"]
    let parks = names.compactMap { name -> ParkDefinition? in
        guard let data = FileManager.default.contents(atPath: "data/parks/\(name).geojson") else { return nil }
        return try? ParkImporter().definition(from: data)
    }
    return try! FenceIndex(parks: parks.map(\.park), zones: parks.flatMap(\.zones), replicas: 1)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch target {
    case "park-import":
        // A small limit keeps each run fast; the limits themselves are part of what is tested.
        var limits = ParkImporter.Limits()
        limits.maxVertices = 20_000
        _ = try? ParkImporter(limits: limits).definition(from: Data(bytes), expectedPark: size % 2 == 0 ? nil : "fuzz")
    case "owntracks":
        _ = OwnTracksPayload.decode(Data(bytes))
    case "json-syntax":
        // The validator against Foundation's parser: what it accepts, `JSONSerialization` reads
        // (which reads more: a trailing comma, a name twice, UTF-16); where it refuses, it says
        // where within the bytes.
        if let fault = JSONSyntax.fault(in: Data(bytes)) {
            guard fault.offset <= size, fault.line >= 1, fault.column >= 1, fault.column <= fault.offset + 1 else {
                fatalError("a fault placed outside the bytes: \(fault)")
            }
        } else {
            guard (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil else {
                fatalError("JSONSyntax accepts what JSONSerialization refuses")
            }
        }
    case "images":
        var work = ImageInspector.Work()
        let image = try? ImageInspector.inspect(bytes, work: &work)
        guard work.steps <= ImageInspector.workBound(size), work.tiffs <= ImageInspector.maximumExifItems else {
            fatalError("inspecting \(size) bytes cost \(work.steps) steps and \(work.tiffs) TIFFs")
        }
        if let image {
            // What comes out ends where a decoder stops, holds no GPS, and reads again as itself
            // with nothing left to strip.
            switch image.format {
            case .jpeg: guard CleanedImage.jpegEnd(image.bytes) == image.bytes.count else { fatalError("bytes after the JPEG's end") }
            case .png: guard CleanedImage.pngEnd(image.bytes) == image.bytes.count else { fatalError("bytes after the PNG's IEND") }
            case .heic: guard image.bytes == bytes else { fatalError("a HEIC was changed") }
            }
            guard !CleanedImage.hasGPS(image.bytes) else { fatalError("GPS in a cleaned image") }
            let same = InspectedImage(format: image.format, width: image.width, height: image.height, bytes: image.bytes, stripped: false)
            guard (try? ImageInspector.inspect(image.bytes)) == same else { fatalError("a cleaned image does not read back as itself") }
        }
    case "wkb":
        // Compared as bytes: NaN coordinates (garbage can hold them) never equal themselves as Doubles.
        if let polygon = try? WKB.decodeMultiPolygon(bytes) {
            let encoded = WKB.encode(polygon)
            guard let again = try? WKB.decodeMultiPolygon(encoded), WKB.encode(again) == encoded else { fatalError("WKB does not round-trip") }
        }
    case "posted-feed":
        let zone = TimeZone(identifier: "America/New_York")!
        _ = try? PostedWaitFeed.parse(Data(bytes), park: "cedar-point", timeZone: zone, csv: size % 2 == 0)
    case "fix-pipeline":
        // Bytes become a stream of fixes (doubles) through plausibility and the fences.
        var state = TrackState()
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        var i = 0
        while i + 32 <= bytes.count {
            let d = (0..<4).map { k in bytes[(i + 8 * k)..<(i + 8 * k + 8)].withUnsafeBytes { $0.loadUnaligned(as: Double.self) } }
            let fix = IncomingFix(lat: d[0], lon: d[1], accuracy: d[2], recordedAt: Date(timeIntervalSince1970: 1_795_000_000 + (d[3].isFinite ? max(-1e9, min(1e9, d[3])) : 0)))
            _ = FixPipeline().process(fix, state: &state, index: fences, now: now)
            i += 32
        }
    case "fix-body":
        // The plain reader against the decoder: whatever it reads, the decoder must read the same.
        if let read = bytes.withUnsafeBytes(FixBody.fixes) {
            guard (try? FixWire.fixes(decoding: Data(bytes))) == read else {
                fatalError("the plain fix reader reads a body otherwise than the decoder")
            }
        }
    case "challenge-body":
        // Each challenge body's decoder and checks: whatever they pass, the rules pass too, and
        // the pointer finder stays within the bytes at any offset.
        let data = Data(bytes)
        let rules = ChallengeRules()
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        if let body = try? JSONDecoding.decode(NewChallengeBody.self, from: data), case .success(let draft) = body.draft(rules: rules, now: now) {
            guard rules.violations(draft, now: now).isEmpty, draft.unit.name == body.unit else {
                fatalError("a challenge body passed that the rules refuse")
            }
        }
        if let patch = try? JSONDecoding.decode(ChallengePatchBody.self, from: data), case .success(let change) = patch.change() {
            guard change.name != nil || change.description != nil || change.end else { fatalError("an empty patch passed") }
        }
        if let invite = try? JSONDecoding.decode(InvitationsBody.self, from: data), case .success(let users) = invite.users(rules: rules) {
            guard (1...rules.maximumInvitees).contains(users.count), Set(users).count == users.count else { fatalError("invitees passed unchecked") }
        }
        if let entry = try? JSONDecoding.decode(ChallengeEntryBody.self, from: data), case .success(let checked) = entry.checked(rules: rules) {
            guard checked.amount.isFinite, checked.amount > 0, checked.amount <= rules.largestAmount else { fatalError("an amount passed unchecked") }
        }
        if let pointer = ChallengeBodies.member(before: size == 0 ? 0 : Int(bytes[0]) * size / 256 + 1, in: bytes) {
            // By bytes: a name may begin with a combining mark, which joins the slash in one Character.
            // At most three bytes a byte read: a byte that is not UTF-8 is named as U+FFFD (three
            // bytes), and `~` and `/` are escaped as two.
            guard pointer.utf8.first == UInt8(ascii: "/"), pointer.utf8.count <= 3 * size + 1 else {
                fatalError("a member pointer that is no pointer to these bytes: \(pointer)")
            }
        }
    case "list-body":
        // Each list body's decoder and checks: whatever they pass, the rules pass too (a title,
        // description and note in bounds, a position in the list, one target of a well-formed id).
        let data = Data(bytes)
        let rules = ListRules()
        if let body = try? JSONDecoding.decode(NewListBody.self, from: data), case .success(let draft) = body.draft(rules: rules) {
            guard rules.violations(draft).isEmpty, (draft.cover ?? 1) > 0 else { fatalError("a list body passed that the rules refuse") }
        }
        if let patch = try? JSONDecoding.decode(ListPatchBody.self, from: data), case .success(let edit) = patch.edit(rules: rules) {
            guard rules.violations(edit).isEmpty, edit.title != nil || edit.description != nil || edit.visibility != nil || edit.cover != nil || edit.newLink
            else { fatalError("a list patch passed that the rules refuse, or an empty one") }
            if edit.newLink, let visibility = edit.visibility, visibility != .link { fatalError("a new link for a list that has none passed") }
        }
        if let item = try? JSONDecoding.decode(NewItemBody.self, from: data), case .success(let checked) = item.checked(rules: rules) {
            let wellFormed: Bool
            switch checked.target {
            case .ride(let id): wellFormed = ListBodies.isRideID(id.rawValue) && item.park == nil
            case .park(let id): wellFormed = Slug.isValid(id.rawValue) && item.ride == nil
            }
            guard wellFormed, checked.note.map({ rules.noteViolation($0) == nil }) ?? true,
                  checked.position.map({ (0..<rules.maximumItems).contains($0) }) ?? true
            else { fatalError("an item body passed unchecked") }
        }
        if let patch = try? JSONDecoding.decode(ItemPatchBody.self, from: data), case .success(let edit) = patch.edit(rules: rules) {
            guard edit.position.map({ (0..<rules.maximumItems).contains($0) }) ?? true, (edit.note ?? nil).map({ rules.noteViolation($0) == nil }) ?? true,
                  edit.position != nil || edit.note != nil || edit.checked != nil
            else { fatalError("an item patch passed unchecked, or an empty one") }
        }
    default:
        fatalError("unknown FUZZ_TARGET \(target)")
    }
    return 0
}

/// The images target's checks of a cleaned image, written apart from the inspector's own walks so
/// that a mistake in one is not repeated in the other.
private enum CleanedImage {
    /// Just after a JPEG's first end-of-image marker, its scans walked as a decoder walks them.
    static func jpegEnd(_ b: [UInt8]) -> Int? {
        var i = 2
        while i + 1 < b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            if marker == 0xD9 { return i + 2 }
            guard i + 3 < b.count else { return nil }
            i += 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3]))
            guard marker == 0xDA else { continue }
            // Entropy-coded data: stuffing (FF 00), restarts (FF D0–D7) and fill bytes (FF FF) go on.
            while i + 1 < b.count, b[i] != 0xFF || b[i + 1] == 0x00 || b[i + 1] == 0xFF || (0xD0...0xD7).contains(b[i + 1]) {
                i += b[i] == 0xFF && b[i + 1] != 0xFF ? 2 : 1
            }
        }
        return nil
    }

    /// Just after a PNG's first IEND chunk.
    static func pngEnd(_ b: [UInt8]) -> Int? {
        var i = 8
        while i + 12 <= b.count {
            let length = b[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            let iend = b[(i + 4)..<(i + 8)].elementsEqual("IEND".utf8)
            i += 12 + length
            if iend { return i <= b.count ? i : nil }
        }
        return nil
    }

    /// An XMP GPS coordinate, or a TIFF header whose first IFD points at a GPS IFD (tag 0x8825,
    /// LONG or IFD, count 1: as EXIF writers write it).
    static func hasGPS(_ b: [UInt8]) -> Bool {
        for name in ["GPSLatitude", "GPSLongitude"] {
            let needle = Array(name.utf8)
            if b.count >= needle.count, (0...(b.count - needle.count)).contains(where: { b[$0...].starts(with: needle) }) { return true }
        }
        for h in b.indices.dropLast(7) {
            let little = b[h...].starts(with: [0x49, 0x49, 0x2A, 0x00])
            guard little || b[h...].starts(with: [0x4D, 0x4D, 0x00, 0x2A]) else { continue }
            func read(_ at: Int, _ size: Int) -> Int? {
                guard at >= 0, at <= b.count - h - size else { return nil }
                let field = b[(h + at)..<(h + at + size)]
                return (little ? Array(field.reversed()) : Array(field)).reduce(0) { $0 << 8 | Int($1) }
            }
            guard let ifd = read(4, 4), let count = read(ifd, 2) else { continue }
            for k in 0..<min(count, 1000) {
                let e = ifd + 2 + 12 * k
                guard let tag = read(e, 2), let type = read(e + 2, 2), let n = read(e + 4, 4) else { break }
                if tag == 0x8825, type == 4 || type == 13, n == 1 { return true }
            }
        }
        return false
    }
}
