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
    case "images":
        if let image = try? ImageInspector.inspect(bytes) {
            // What comes out must read again as the same image, with nothing left to strip.
            guard let again = try? ImageInspector.inspect(image.bytes), again.width == image.width, again.height == image.height,
                  image.format == .heic || !again.stripped || again.bytes == image.bytes
            else { fatalError("a cleaned image does not read back the same") }
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
    default:
        fatalError("unknown FUZZ_TARGET \(target)")
    }
    return 0
}
