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

/// The real parks' places, for the places target (loaded once).
private let parkPlaces: ParkPlaces = {
    let parks = ["cedar-point", "kings-island", "six-flags-fiesta-texas"].compactMap { name -> ParkDefinition? in
        guard let data = FileManager.default.contents(atPath: "data/parks/\(name).geojson") else { return nil }
        return try? ParkImporter().definition(from: data)
    }
    return ParkPlaces(parks)
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
            case .ride(let id): wellFormed = Slug.isRideID(id.rawValue) && item.park == nil
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
    case "places":
        // Bytes: a `category` value, a `limit` value and a position (two doubles), split at the
        // first two zero bytes (a part left out, or the one byte FF, is a parameter not given). The query is read as the
        // route reads it; a query it accepts is answered in every park from the position (moved
        // next to the park when it is finite, so most runs measure): at most `limit` places, all
        // of the asked categories, nearest first with finite distances and bearings in 0..<360, and by name.
        let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
        func text(_ i: Int) -> Substring? {
            i < parts.count && !parts[i].elementsEqual([0xFF]) ? Substring(String(decoding: parts[i], as: UTF8.self)) : nil
        }
        guard case .success(let query) = PlaceQuery.parse(category: text(0), limit: text(1)) else { break }
        guard PlaceQuery.limits.contains(query.limit) else { fatalError("a limit out of range passed: \(query.limit)") }
        let rest = parts.count > 2 ? Array(parts[2]) : []
        let d = (0..<2).map { k in rest.count >= 8 * (k + 1) ? rest[(8 * k)..<(8 * k + 8)].withUnsafeBytes { $0.loadUnaligned(as: Double.self) } : 0 }
        for p in parkPlaces.parkIDs.indices {
            let all = parkPlaces.places(ofParkAt: p)
            guard let anchor = all.first?.position else { continue }
            let origin = d[0].isFinite && d[1].isFinite
                ? Coordinate(lat: anchor.lat + d[0].truncatingRemainder(dividingBy: 0.05), lon: anchor.lon + d[1].truncatingRemainder(dividingBy: 0.05))
                : Coordinate(lat: d[0], lon: d[1])
            func asked(_ f: PlaceFound) -> Bool {
                query.categories.rawValue == 0 || all[f.place].category.map { query.categories.contains($0.bit) } == true
            }
            let near = parkPlaces.nearest(inParkAt: p, from: origin, query)
            guard near.count <= query.limit, near.allSatisfy(asked), Set(near.map(\.place)).count == near.count else {
                fatalError("nearest answered other places than asked: \(near)")
            }
            var last = -1.0
            for f in near {
                guard let distance = f.distance, let bearing = f.bearing, distance.isFinite, distance >= last, bearing >= 0, bearing < 360 else {
                    fatalError("a place out of order or without a distance and bearing: \(f) after \(last)")
                }
                last = distance
            }
            let named = parkPlaces.byName(inParkAt: p, query)
            guard named.count <= query.limit, named.allSatisfy(asked), named.allSatisfy({ $0.distance == nil && $0.bearing == nil }) else {
                fatalError("by name answered other places than asked: \(named)")
            }
        }
    case "profile-body":
        // The profile members of PATCH /v1/me: whatever the checks pass, the rules pass too (a
        // name and bio in bounds, one emoji and a one-line text of at most 80 characters, a
        // park's id, at most 10 distinct ride ids of the right form).
        if let body = try? JSONDecoding.decode(ProfileBody.self, from: Data(bytes)), case .success(let changes) = body.changes() {
            if let name = changes.displayName, (try? AccountRules.displayName(name)) != name { fatalError("a display name passed that the rules refuse") }
            if let bio = changes.bio, (try? AccountRules.bio(bio)) != bio { fatalError("a bio passed that the rules refuse") }
            if case .some(.some(let status)) = changes.status {
                guard PeopleRules.isEmoji(status.emoji), (try? PeopleRules.status(emoji: status.emoji, text: status.text)) == status,
                      !status.text.contains(where: \.isNewline)
                else { fatalError("a status passed that the rules refuse") }
            }
            if case .some(.some(let park)) = changes.homePark, !Slug.isValid(park.rawValue) { fatalError("a home park of no park id's form passed") }
            if let rides = changes.favouriteRides {
                guard rides.count <= PeopleRules.maximumFavouriteRides, Set(rides).count == rides.count,
                      rides.allSatisfy({ Slug.isRideID($0.rawValue) })
                else { fatalError("favourite rides passed unchecked") }
            }
        }
        // A name is found by itself: its whole folded form is one of its keys.
        if bytes.count <= 1_024, let name = String(validating: bytes, as: UTF8.self) {
            let key = PeopleRules.searchKey(name)
            if !key.isEmpty, !PeopleRules.nameKeys(displayName: name, username: "user").contains(key) { fatalError("a name is not found by itself") }
            _ = PeopleRules.isEmoji(name)
        }
    case "post-body":
        // Each post body's decoder and checks: whatever they pass, the rules pass too (text in
        // bounds, photos, parks and rides of well-formed ids within their counts, a thumb that is
        // up or down, a comment in bounds and not blank).
        let data = Data(bytes)
        if let body = try? JSONDecoding.decode(NewPostBody.self, from: data), case .success(let draft) = body.draft() {
            guard PostRules.violations(draft).isEmpty, draft.photos.allSatisfy({ $0 > 0 }), draft.parks.allSatisfy({ Slug.isValid($0.rawValue) }),
                  draft.rides.allSatisfy({ Slug.isRideID($0.rawValue) }), draft.verifiedAt.map({ Slug.isValid($0.rawValue) }) ?? true,
                  draft.hashtags.count <= PostRules.maximumHashtags
            else { fatalError("a post body passed that the rules refuse") }
        }
        if let patch = try? JSONDecoding.decode(PostPatchBody.self, from: data), case .success(let edit) = patch.edit() {
            guard PostRules.violations(edit).isEmpty, !edit.isEmpty, (edit.photos ?? []).allSatisfy({ $0 > 0 }) else {
                fatalError("a post patch passed that the rules refuse, or an empty one")
            }
        }
        if let body = try? JSONDecoding.decode(ReactionBody.self, from: data), case .success(let reaction) = body.reaction() {
            guard Reaction.allCases.contains(reaction) else { fatalError("a thumb passed unchecked") }
        }
        if let body = try? JSONDecoding.decode(NewCommentBody.self, from: data), case .success(let text) = body.checked() {
            guard PostRules.comment.violation(text) == nil, !PostRules.isBlank(text) else { fatalError("a comment passed unchecked") }
        }
        // Hashtags of any text: each folded, each a hashtag again, at most one per `#`.
        if let text = String(bytes: bytes, encoding: .utf8) {
            let tags = PostRules.hashtags(in: text)
            guard tags.count <= text.utf8.filter({ $0 == UInt8(ascii: "#") }).count, Set(tags).count == tags.count,
                  tags.allSatisfy({ PostRules.hashtag($0) == $0 })
            else { fatalError("hashtags that are none: \(tags)") }
            _ = PostRules.searchTerms(text)
            guard PageCursor(decoding: text).map({ PageCursor(decoding: $0.encoded) == $0 }) ?? true else { fatalError("a cursor that does not round-trip") }
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
