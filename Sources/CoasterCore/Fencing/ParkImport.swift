import Foundation

/// One thing wrong with a park file: which feature, where in the document, and why.
public struct ImportIssue: Hashable, Sendable, CustomStringConvertible {
    /// Index into `features`, or `nil` for the document itself.
    public var feature: Int?
    /// RFC 6901 pointer to the offending value, e.g. `/features/3/geometry/coordinates/0/5`.
    public var pointer: String
    public var reason: String
    /// Where on the ground the problem is, when it has a place (SRID 4326): the point GEOS names
    /// for an invalid geometry, the vertex of a zone farthest outside its park, a ride or poi
    /// point outside the park. A map draws it; `nil` for problems of the document's structure.
    public var location: Coordinate?

    public init(feature: Int?, pointer: String, reason: String, location: Coordinate? = nil) {
        self.feature = feature
        self.pointer = pointer
        self.reason = reason
        self.location = location
    }

    public var description: String {
        if let feature { return "feature \(feature) (\(self.pointer)): \(self.reason)" }
        return "\(self.pointer.isEmpty ? "document" : self.pointer): \(self.reason)"
    }
}

/// A park file that was refused, with every issue found (up to ``ParkImporter/Limits/maxIssues``).
public struct ImportRejection: Error, Hashable, Sendable, CustomStringConvertible {
    public var issues: [ImportIssue]

    public init(issues: [ImportIssue]) {
        self.issues = issues
    }

    public var description: String { self.issues.map(\.description).joined(separator: "\n") }
}

/// A park file read and validated: the park it defines, and what in it was ignored.
public struct ParkImport: Hashable, Sendable {
    public var definition: ParkDefinition
    /// Members the format does not know, each ignored: a misspelt property is said, not silently
    /// dropped.
    public var warnings: [ImportIssue]
}

/// Reads a park's GeoJSON FeatureCollection into a validated ``ParkDefinition``.
///
/// The format (docs: Geofences, "Park files"): one feature of `kind: park` (Polygon or MultiPolygon) and any
/// number of zone features of kind `ride`, `queue`, `land` or `poi`. Point and MultiPoint ride and
/// poi features are buffered into circles of `radius_m` metres (default
/// ``ParkImporter/defaultPointRadius``) on the ellipsoid, clipped to the park boundary. Nothing of
/// the file is accepted unless all of it is valid.
///
/// What `GET /v1/parks/{parkId}` serves is a park file of this format (``ParkFile``): it reads
/// back to the same park.
public struct ParkImporter: Sendable {
    /// Radius, metres, of the zone drawn around a ride or poi given as a point: about the footprint
    /// of a station building and its entrance, the area a rider stands in when they board.
    public static let defaultPointRadius = 25.0
    /// Allowed `radius_m`, metres.
    public static let pointRadiusRange = 1.0...200.0
    /// How far, in metres, a zone polygon may reach outside its park and still be accepted (then
    /// clipped to the park): OpenStreetMap park data is simplified to about 1.2 m and rounded to
    /// five decimals (about 1 m), so lands drawn along the fence overshoot it by a few metres (Cedar Point's Gemini Midway by 4.6 m).
    public static let boundaryTolerance = 5.0
    /// How far, in metres, a zone may reach outside its park and count as inside: a millimetre,
    /// far below any GPS fix and far above the rounding of a vertex computed on the boundary.
    public static let onTheFence = 0.001

    public struct Limits: Sendable {
        public var maxFeatures = 10_000
        public var maxVerticesPerFeature = 100_000
        public var maxVertices = 1_000_000
        public var maxIssues = 100
        public init() {}
    }

    public var limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Parses and validates raw bytes. `expectedPark`, when given (an admin route's path), must
    /// match the park feature's `id`, or becomes it when the feature has none.
    public func read(_ data: Data, expectedPark: ParkID? = nil) throws(ImportRejection) -> ParkImport {
        let json: JSONValue
        do {
            json = try JSONValue.strict(data)
        } catch {
            throw ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "not valid JSON: \(Self.describe(error))")])
        }
        return try self.read(json, expectedPark: expectedPark)
    }

    public func read(_ json: JSONValue, expectedPark: ParkID? = nil) throws(ImportRejection) -> ParkImport {
        var run = ImportRun(limits: self.limits)
        let result = run.read(json, expectedPark: expectedPark)
        guard run.issues.isEmpty, let result else {
            throw ImportRejection(issues: Array(run.issues.prefix(self.limits.maxIssues)))
        }
        return ParkImport(definition: result, warnings: run.warnings)
    }

    /// The park alone, for callers that report no warnings.
    public func definition(from data: Data, expectedPark: ParkID? = nil) throws(ImportRejection) -> ParkDefinition {
        try self.read(data, expectedPark: expectedPark).definition
    }

    public func definition(from json: JSONValue, expectedPark: ParkID? = nil) throws(ImportRejection) -> ParkDefinition {
        try self.read(json, expectedPark: expectedPark).definition
    }

    /// The members each part of a park file may carry; any other is ignored with a warning.
    static let knownMembers: [String: Set<String>] = [
        "document": ["type", "features", "attribution", "bbox"],
        "feature": ["type", "id", "properties", "geometry", "bbox"],
        "park": ["kind", "id", "name", "timezone"],
        "land": ["kind", "id", "name"],
        "queue": ["kind", "id", "name", "ride"],
        "ride": ["kind", "id", "name", "type", "status", "land", "note", "height_min_cm", "height_alone_cm", "height_max_cm",
                 "cycle_s", "stats", "radius_m", "position"],
        "poi": ["kind", "id", "name", "category", "land", "radius_m", "position"],
        "stats": ["height_m", "speed_kmh", "length_m", "inversions", "manufacturer", "model", "opened", "material", "source"],
    ]

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        case let fault as JSONSyntax.Fault:
            return fault.description
        default:
            return "unreadable"
        }
    }
}

/// The geometry of one feature after the structural checks.
private enum FeatureGeometry {
    case none
    case points([Coordinate])
    case area(MultiPolygon)
}

private struct PendingFeature {
    var index: Int
    var kind: String
    var slug: String
    var name: String
    var geometry: FeatureGeometry
    var properties: [String: JSONValue]
    var radius: Double
    /// The feature's own GeoJSON `id` member, when it has one.
    var id: JSONValue?
    var category: String?
}

/// One pass over one document, accumulating issues.
private struct ImportRun {
    let limits: ParkImporter.Limits
    var issues: [ImportIssue] = []
    var warnings: [ImportIssue] = []
    var totalVertices = 0

    init(limits: ParkImporter.Limits) {
        self.limits = limits
    }

    mutating func fail(_ feature: Int?, _ pointer: JSONPointer, _ reason: String, at location: Coordinate? = nil) {
        if self.issues.count < self.limits.maxIssues {
            self.issues.append(ImportIssue(feature: feature, pointer: pointer.description, reason: reason, location: location))
        }
    }

    /// Warns of each member of `object` that `part` does not know (at most `maxIssues` warnings).
    mutating func warnUnknown(_ object: [String: JSONValue], part: String, _ feature: Int?, _ pointer: JSONPointer) {
        let known = ParkImporter.knownMembers[part] ?? []
        for name in object.keys.sorted() where !known.contains(name) && self.warnings.count < self.limits.maxIssues {
            let hint = part == "park" && name == "timeZone" ? "; the park's time zone is \"timezone\"" : ""
            self.warnings.append(ImportIssue(feature: feature, pointer: pointer.appending(name).description,
                                             reason: "unknown \(part == "feature" || part == "document" ? "member" : "property") \"\(name.prefix(64))\", ignored\(hint)"))
        }
    }

    mutating func read(_ json: JSONValue, expectedPark: ParkID?) -> ParkDefinition? {
        let root = JSONPointer()
        guard case .object(let document) = json else {
            self.fail(nil, root, "expected a GeoJSON FeatureCollection object, found \(json.typeName)")
            return nil
        }
        guard document["type"] == .string("FeatureCollection") else {
            self.fail(nil, root.appending("type"), "expected \"FeatureCollection\"")
            return nil
        }
        guard case .array(let features) = document["features"] else {
            self.fail(nil, root.appending("features"), "expected an array of features")
            return nil
        }
        guard features.count <= self.limits.maxFeatures else {
            self.fail(nil, root.appending("features"), "\(features.count) features; at most \(self.limits.maxFeatures)")
            return nil
        }
        self.warnUnknown(document, part: "document", nil, root)
        var attribution: String?
        if let value = document["attribution"] {
            if case .string(let text) = value { attribution = text } else {
                self.fail(nil, root.appending("attribution"), "expected a string")
            }
        }

        var pending: [PendingFeature] = []
        for (index, feature) in features.enumerated() {
            if let parsed = self.readFeature(feature, index: index) { pending.append(parsed) }
        }
        let parks = pending.filter { $0.kind == "park" }
        if parks.isEmpty && self.issues.isEmpty {
            self.fail(nil, root.appending("features"), "no feature has \"kind\": \"park\"; a park file needs exactly one")
        }
        for extra in parks.dropFirst() {
            self.fail(extra.index, root.appending("features").appending(extra.index), "a second park feature; a park file holds exactly one park")
        }
        guard self.issues.isEmpty, let parkFeature = parks.first, case .area(let boundary) = parkFeature.geometry else {
            return nil
        }

        var parkID = ParkID(rawValue: parkFeature.slug)
        let parkPointer = root.appending("features").appending(parkFeature.index)
        if let expectedPark {
            if parkFeature.properties["id"] == nil || parkFeature.properties["id"] == .null {
                parkID = expectedPark
            } else if parkID != expectedPark {
                self.fail(parkFeature.index, parkPointer.appending("properties").appending("id"),
                          "park id \"\(parkID)\" does not match \"\(expectedPark)\" in the request path")
            }
        }
        // A park's day (opening hours, posted feeds, wait history by hour) is local: a park without
        // a time zone is refused rather than read as UTC.
        var timeZone = ""
        switch parkFeature.properties["timezone"] {
        case .string(let text)? where TimeZone(identifier: text) != nil:
            timeZone = text
        case nil:
            self.fail(parkFeature.index, parkPointer.appending("properties").appending("timezone"),
                      "a park needs its IANA time zone, e.g. \"timezone\": \"America/New_York\""
                        + (parkFeature.properties["timeZone"] != nil ? " (the property is spelt \"timezone\")" : ""))
        default:
            self.fail(parkFeature.index, parkPointer.appending("properties").appending("timezone"),
                      "expected an IANA time zone name such as \"America/New_York\"")
        }

        let context = GEOSContext()
        guard let park = self.checkedArea(boundary, feature: parkFeature, context: context) else { return nil }
        let preparedPark: GEOSPreparedGeometry
        do {
            preparedPark = try park.prepared()
        } catch {
            self.fail(parkFeature.index, parkPointer.appending("geometry"), error.message)
            return nil
        }

        var seen: [String: Int] = [:]
        var zones: [Zone] = []
        var rides: [Ride] = []
        let zoneFeatures = pending.filter { $0.kind != "park" }
        let rideSlugs = Set(zoneFeatures.filter { $0.kind == "ride" }.map(\.slug))
        for feature in zoneFeatures {
            let pointer = root.appending("features").appending(feature.index)
            if let first = seen[feature.slug] {
                self.fail(feature.index, pointer.appending("properties").appending("id"),
                          "id \"\(feature.slug)\" is already used by feature \(first); zone and ride ids must be unique within a park")
                continue
            }
            seen[feature.slug] = feature.index
            // A bad position is an issue, which refuses the file; the feature's other issues are still listed.
            let position = self.placePosition(feature, prepared: preparedPark, context: context, pointer: pointer)
            let zoneID = ZoneID(park: parkID, slug: feature.slug)
            var rideID: RideID?
            if feature.kind == "ride" {
                guard let ride = self.readRide(feature, park: parkID, pointer: pointer) else { continue }
                rides.append(ride)
                rideID = ride.id
            } else if feature.kind == "queue" {
                guard case .string(let target) = feature.properties["ride"], rideSlugs.contains(target) else {
                    self.fail(feature.index, pointer.appending("properties").appending("ride"),
                              "a queue zone names the id of a ride feature in this file")
                    continue
                }
                rideID = RideID(park: parkID, slug: target)
            }
            let land = feature.kind == "poi" ? self.optionalString(feature, "land", pointer.appending("properties")) : nil
            guard let area = self.zoneArea(feature, park: park, prepared: preparedPark, context: context, pointer: pointer)
            else { continue }
            zones.append(Zone(id: zoneID, park: parkID, kind: ZoneKind(rawValue: feature.kind)!, name: feature.name,
                              ride: rideID, category: feature.category, area: area, position: position, land: land))
        }
        for feature in pending {
            let pointer = root.appending("features").appending(feature.index)
            if case .string(let given)? = feature.id, given != feature.slug, given != "\(parkID).\(feature.slug)" {
                self.warnings.append(ImportIssue(feature: feature.index, pointer: pointer.appending("id").description,
                                                 reason: "feature id \"\(given.prefix(64))\" is not this feature's; its id is \"\(parkID).\(feature.slug)\""))
            }
        }
        guard self.issues.isEmpty else { return nil }
        return ParkDefinition(
            park: Park(id: parkID, name: parkFeature.name, timeZone: timeZone, attribution: attribution, boundary: boundary),
            zones: zones, rides: rides)
    }

    // MARK: Features

    mutating func readFeature(_ value: JSONValue, index: Int) -> PendingFeature? {
        let pointer = JSONPointer().appending("features").appending(index)
        guard case .object(let feature) = value else {
            self.fail(index, pointer, "expected a Feature object, found \(value.typeName)")
            return nil
        }
        guard feature["type"] == .string("Feature") else {
            self.fail(index, pointer.appending("type"), "expected \"Feature\"")
            return nil
        }
        guard case .object(let properties) = feature["properties"] else {
            self.fail(index, pointer.appending("properties"), "expected a properties object with at least kind and name")
            return nil
        }
        let props = pointer.appending("properties")
        guard case .string(let kind) = properties["kind"], kind == "park" || ZoneKind(rawValue: kind) != nil else {
            self.fail(index, props.appending("kind"), "kind must be one of park, ride, queue, land, poi")
            return nil
        }
        self.warnUnknown(feature, part: "feature", index, pointer)
        self.warnUnknown(properties, part: kind, index, props)
        if kind == "ride", case .object(let stats)? = properties["stats"] {
            self.warnUnknown(stats, part: "stats", index, props.appending("stats"))
        }
        var category: String?
        if kind == "poi", let value = properties["category"], value != .null {
            let allowed = PlaceCategory.poiCategories.map(\.rawValue).joined(separator: ", ")
            guard case .string(let text) = value else {
                self.fail(index, props.appending("category"), "category must be one of \(allowed)")
                return nil
            }
            if let known = PlaceCategory(rawValue: text), PlaceCategory.poiCategories.contains(known) {
                category = known.rawValue
            } else if let renamed = PlaceCategory.formerNames[text] {
                category = renamed.rawValue
                self.warnings.append(ImportIssue(feature: index, pointer: props.appending("category").description,
                                                 reason: "category \"\(text)\" is now \"\(renamed.rawValue)\"; read as \"\(renamed.rawValue)\""))
            } else if text == PlaceCategory.ride.rawValue || text == PlaceCategory.show.rawValue {
                self.fail(index, props.appending("category"),
                          "a ride or a show is a feature of kind \"ride\" (type \"show\" for a show), which places list as category \"\(text)\"; a poi's category is one of \(allowed)")
                return nil
            } else {
                self.fail(index, props.appending("category"), "category \"\(text.prefix(64))\" is not one of \(allowed)")
                return nil
            }
        }
        guard case .string(let rawName) = properties["name"],
              case let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty, name.count <= 200
        else {
            self.fail(index, props.appending("name"), "name must be a non-empty string of at most 200 characters")
            return nil
        }
        let slug: String
        switch properties["id"] {
        case .string(let id)?:
            guard Slug.isValid(id) else {
                self.fail(index, props.appending("id"), "id \"\(id)\" must be 1–64 characters of a-z, 0-9 and inner hyphens")
                return nil
            }
            slug = id
        case nil, .null?:
            guard let made = Slug.make(from: name) else {
                self.fail(index, props.appending("name"), "no id given and none can be made from this name; add an id")
                return nil
            }
            slug = made
        default:
            self.fail(index, props.appending("id"), "expected a string")
            return nil
        }
        var radius = ParkImporter.defaultPointRadius
        if let value = properties["radius_m"] {
            guard case .number(let r) = value, ParkImporter.pointRadiusRange.contains(r) else {
                self.fail(index, props.appending("radius_m"), "radius_m must be a number of metres in 1…200")
                return nil
            }
            radius = r
        }
        let geometryPointer = pointer.appending("geometry")
        let geometry: FeatureGeometry
        switch feature["geometry"] {
        case nil, .null?:
            guard kind == "ride" else {
                self.fail(index, geometryPointer, "a \(kind) feature needs a geometry; only rides may have none")
                return nil
            }
            geometry = .none
        case let value?:
            guard let parsed = self.readGeometry(value, index: index, pointer: geometryPointer) else { return nil }
            geometry = parsed
        }
        switch (kind, geometry) {
        case ("park", .area), ("land", .area), ("queue", .area), ("ride", _), ("poi", .area), ("poi", .points):
            break
        default:
            self.fail(index, geometryPointer.appending("type"),
                      kind == "park" || kind == "land" || kind == "queue"
                        ? "a \(kind) must be a Polygon or MultiPolygon" : "a \(kind) must be a Point, MultiPoint, Polygon or MultiPolygon")
            return nil
        }
        return PendingFeature(index: index, kind: kind, slug: slug, name: name, geometry: geometry, properties: properties, radius: radius,
                              id: feature["id"], category: category)
    }

    mutating func readRide(_ feature: PendingFeature, park: ParkID, pointer: JSONPointer) -> Ride? {
        let props = pointer.appending("properties")
        let before = self.issues.count
        var type = RideType.ride
        if let value = feature.properties["type"] {
            if case .string(let text) = value, let parsed = RideType(rawValue: text) { type = parsed } else {
                self.fail(feature.index, props.appending("type"),
                          "type must be one of \(RideType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        var status = RideStatus.operating
        if let value = feature.properties["status"] {
            if case .string(let text) = value, let parsed = RideStatus(rawValue: text) { status = parsed } else {
                self.fail(feature.index, props.appending("status"),
                          "status must be one of \(RideStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        let land = self.optionalString(feature, "land", props)
        let note = self.optionalString(feature, "note", props)
        let minHeight = self.optionalInt(feature.properties["height_min_cm"], feature.index, props.appending("height_min_cm"), 0...250)
        let aloneHeight = self.optionalInt(feature.properties["height_alone_cm"], feature.index, props.appending("height_alone_cm"), 0...250)
        let maxHeight = self.optionalInt(feature.properties["height_max_cm"], feature.index, props.appending("height_max_cm"), 0...300)
        let cycle = self.optionalInt(feature.properties["cycle_s"], feature.index, props.appending("cycle_s"), 10...7200)
        var stats = RideStats()
        if let value = feature.properties["stats"] {
            let sp = props.appending("stats")
            if case .object(let s) = value {
                stats.heightM = self.optionalNumber(s["height_m"], feature.index, sp.appending("height_m"), 0...250)
                stats.speedKmh = self.optionalNumber(s["speed_kmh"], feature.index, sp.appending("speed_kmh"), 0...300)
                stats.lengthM = self.optionalNumber(s["length_m"], feature.index, sp.appending("length_m"), 0...10_000)
                stats.inversions = self.optionalInt(s["inversions"], feature.index, sp.appending("inversions"), 0...30)
                stats.opened = self.optionalInt(s["opened"], feature.index, sp.appending("opened"), 1800...2200)
                stats.manufacturer = self.optionalText(s["manufacturer"], feature.index, sp.appending("manufacturer"))
                stats.model = self.optionalText(s["model"], feature.index, sp.appending("model"))
                stats.material = self.optionalText(s["material"], feature.index, sp.appending("material"))
                stats.source = self.optionalText(s["source"], feature.index, sp.appending("source"))
            } else {
                self.fail(feature.index, sp, "expected an object")
            }
        }
        guard self.issues.count == before else { return nil }
        return Ride(id: RideID(park: park, slug: feature.slug), park: park, name: feature.name, type: type, status: status,
                    land: land, minHeightCm: minHeight, aloneHeightCm: aloneHeight, maxHeightCm: maxHeight, cycleSeconds: cycle,
                    note: note, stats: stats)
    }

    /// Where a ride or poi is (``Zone/position``): its `position` property, which must lie in the
    /// park, else its geometry's (first) point; `nil` inside for a feature drawn as an area without
    /// one, and for lands and queues. A bad property is an issue.
    mutating func placePosition(_ feature: PendingFeature, prepared: GEOSPreparedGeometry, context: GEOSContext,
                                pointer: JSONPointer) -> Coordinate? {
        guard feature.kind == "ride" || feature.kind == "poi" else { return nil }
        guard let value = feature.properties["position"], value != .null else {
            if case .points(let points) = feature.geometry { return points.first }
            return nil
        }
        let at = pointer.appending("properties").appending("position")
        guard let position = self.position(value, feature.index, at) else { return nil }
        do {
            guard try prepared.covers(try context.point(position)) else {
                self.fail(feature.index, at, "the position of \(feature.kind) \"\(feature.name)\" at \(position) lies outside its park's boundary",
                          at: position)
                return nil
            }
        } catch {
            self.fail(feature.index, at, "position could not be processed: \(error.message)")
            return nil
        }
        if case .none = feature.geometry {
            self.warnings.append(ImportIssue(feature: feature.index, pointer: at.description,
                                             reason: "a ride without a geometry is no place; its position is ignored"))
            return nil
        }
        return position
    }

    mutating func optionalString(_ feature: PendingFeature, _ key: String, _ props: JSONPointer) -> String? {
        self.optionalText(feature.properties[key], feature.index, props.appending(key))
    }

    mutating func optionalText(_ value: JSONValue?, _ index: Int, _ pointer: JSONPointer) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.count <= 200: return text
        default:
            self.fail(index, pointer, "expected a string of at most 200 characters")
            return nil
        }
    }

    mutating func optionalNumber(_ value: JSONValue?, _ index: Int, _ pointer: JSONPointer, _ range: ClosedRange<Double>) -> Double? {
        switch value {
        case nil, .null?: return nil
        case .number(let x)? where range.contains(x): return x
        default:
            self.fail(index, pointer, "expected a number in \(range.lowerBound)…\(range.upperBound)")
            return nil
        }
    }

    mutating func optionalInt(_ value: JSONValue?, _ index: Int, _ pointer: JSONPointer, _ range: ClosedRange<Int>) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .number(let x)? where x.rounded() == x && x >= Double(range.lowerBound) && x <= Double(range.upperBound):
            return Int(x)
        default:
            self.fail(index, pointer, "expected a whole number in \(range.lowerBound)…\(range.upperBound)")
            return nil
        }
    }

    // MARK: Geometry structure

    mutating func readGeometry(_ value: JSONValue, index: Int, pointer: JSONPointer) -> FeatureGeometry? {
        guard case .object(let geometry) = value, case .string(let type) = geometry["type"] else {
            self.fail(index, pointer, "expected a GeoJSON geometry object with a type")
            return nil
        }
        let coordinates = pointer.appending("coordinates")
        guard let raw = geometry["coordinates"] else {
            self.fail(index, coordinates, "missing coordinates")
            return nil
        }
        var vertices = 0
        defer { self.totalVertices += vertices }
        switch type {
        case "Point":
            guard let c = self.position(raw, index, coordinates) else { return nil }
            return .points([c])
        case "MultiPoint":
            guard case .array(let items) = raw, !items.isEmpty else {
                self.fail(index, coordinates, "a MultiPoint needs an array of positions")
                return nil
            }
            var points: [Coordinate] = []
            for (i, item) in items.enumerated() {
                guard let c = self.position(item, index, coordinates.appending(i)) else { return nil }
                points.append(c)
            }
            return .points(points)
        case "Polygon":
            guard let polygon = self.polygon(raw, index, coordinates, &vertices) else { return nil }
            return .area(MultiPolygon(polygons: [polygon]))
        case "MultiPolygon":
            guard case .array(let items) = raw, !items.isEmpty else {
                self.fail(index, coordinates, "a MultiPolygon needs an array of polygons")
                return nil
            }
            var polygons: [Polygon] = []
            for (i, item) in items.enumerated() {
                guard let polygon = self.polygon(item, index, coordinates.appending(i), &vertices) else { return nil }
                polygons.append(polygon)
            }
            return .area(MultiPolygon(polygons: polygons))
        default:
            self.fail(index, pointer.appending("type"), "unsupported geometry type \"\(type)\"")
            return nil
        }
    }

    mutating func polygon(_ value: JSONValue, _ index: Int, _ pointer: JSONPointer, _ vertices: inout Int) -> Polygon? {
        guard case .array(let ringValues) = value, !ringValues.isEmpty else {
            self.fail(index, pointer, "a polygon needs an array of linear rings")
            return nil
        }
        var rings: [[Coordinate]] = []
        for (r, ringValue) in ringValues.enumerated() {
            let ringPointer = pointer.appending(r)
            guard case .array(let positions) = ringValue else {
                self.fail(index, ringPointer, "a linear ring is an array of positions")
                return nil
            }
            vertices += positions.count
            guard vertices <= self.limits.maxVerticesPerFeature, self.totalVertices + vertices <= self.limits.maxVertices else {
                self.fail(index, ringPointer, "too many vertices (at most \(self.limits.maxVerticesPerFeature) per feature and \(self.limits.maxVertices) per file)")
                return nil
            }
            guard positions.count >= 4 else {
                self.fail(index, ringPointer, "a linear ring needs at least 4 positions, found \(positions.count)")
                return nil
            }
            var ring: [Coordinate] = []
            ring.reserveCapacity(positions.count)
            for (p, position) in positions.enumerated() {
                guard let c = self.position(position, index, ringPointer.appending(p)) else { return nil }
                if let previous = ring.last, abs(c.lon - previous.lon) > 180 {
                    self.fail(index, ringPointer.appending(p),
                              "edge spans more than 180° of longitude: a shape crossing the antimeridian must be split at ±180° (RFC 7946 §3.1.9)")
                    return nil
                }
                ring.append(c)
            }
            guard ring.first == ring.last else {
                self.fail(index, ringPointer, "ring is not closed: its last position must equal its first")
                return nil
            }
            rings.append(ring)
        }
        return Polygon(rings: rings)
    }

    mutating func position(_ value: JSONValue, _ index: Int, _ pointer: JSONPointer) -> Coordinate? {
        guard case .array(let numbers) = value, (2...3).contains(numbers.count),
              case .number(let lon) = numbers[0], case .number(let lat) = numbers[1]
        else {
            self.fail(index, pointer, "a position is [lon, lat] (optionally with altitude) of numbers")
            return nil
        }
        do {
            return try Coordinate.validated(lat: lat, lon: lon)
        } catch {
            self.fail(index, pointer.appending(error.field == "lon" ? 0 : 1), error.description)
            return nil
        }
    }

    // MARK: Geometry semantics (GEOS)

    /// How far, in metres, the part of `area` outside the park reaches from the park (0 if none),
    /// and the vertex (lon/lat) that reaches that far (`nil` if none is outside).
    /// Measured on a local plane in metres around the park, not in degrees.
    func farthestOutside(_ area: MultiPolygon, park: GEOSGeometry, context: GEOSContext) throws(GEOSError)
        -> (metres: Double, vertex: Coordinate?)
    {
        let parkArea = try park.polygons()
        guard let origin = parkArea.boundingBox?.center else { return (0, nil) }
        let plane = Geodesy.LocalPlane(origin: origin)
        let parkPlane = try context.geometry(plane.project(parkArea))
        let projected = plane.project(area)
        let outside = try context.geometry(projected).difference(parkPlane).polygons()
        // GEOS copies the input's vertices into the difference unchanged, so the farthest one (an
        // input vertex unless the shape is odd) maps back to the file's own coordinate exactly;
        // a vertex GEOS made on the fence is unprojected.
        var original: [Coordinate: Coordinate] = [:]
        for (polygon, plain) in zip(projected.polygons, area.polygons) {
            for (ring, plainRing) in zip(polygon.rings, plain.rings) {
                for (vertex, coordinate) in zip(ring, plainRing) { original[vertex] = coordinate }
            }
        }
        var farthest = 0.0
        var farthestVertex: Coordinate?
        for polygon in outside.polygons {
            for ring in polygon.rings {
                for vertex in ring {
                    let distance = try context.point(vertex).distance(parkPlane)
                    if farthestVertex == nil || distance > farthest {
                        farthest = distance
                        farthestVertex = vertex
                    }
                }
            }
        }
        return (farthest, farthestVertex.map { original[$0] ?? plane.unproject(x: $0.lon, y: $0.lat) })
    }

    mutating func checkedArea(_ area: MultiPolygon, feature: PendingFeature, context: GEOSContext) -> GEOSGeometry? {
        let pointer = JSONPointer().appending("features").appending(feature.index).appending("geometry")
        do {
            let geometry = try context.geometry(area)
            if let invalid = try geometry.invalidity() {
                self.fail(feature.index, pointer, "invalid \(feature.kind) geometry: \(invalid.description)", at: invalid.location)
                return nil
            }
            return geometry
        } catch {
            self.fail(feature.index, pointer, "invalid \(feature.kind) geometry: \(error.message)")
            return nil
        }
    }

    mutating func zoneArea(
        _ feature: PendingFeature, park: GEOSGeometry, prepared: GEOSPreparedGeometry, context: GEOSContext,
        pointer: JSONPointer
    ) -> MultiPolygon? {
        let geometryPointer = pointer.appending("geometry")
        do throws(GEOSError) {
            switch feature.geometry {
            case .none:
                return nil
            case .area(let area):
                guard let zone = self.checkedArea(area, feature: feature, context: context) else { return nil }
                if try prepared.covers(zone) { return area }
                // Real park data traces the fence with rounded coordinates, so a land that shares the
                // park's edge pokes out by a metre or so. Accept up to the tolerance, then clip.
                let (outside, vertex) = try self.farthestOutside(area, park: park, context: context)
                // A zone clipped once has vertices on the fence, which floating point puts a hair
                // either side of it: kept as it is, so a served park loads back unchanged (clipping
                // again would start its rings elsewhere and add vertices).
                if outside <= ParkImporter.onTheFence { return area }
                guard outside <= ParkImporter.boundaryTolerance else {
                    self.fail(feature.index, geometryPointer, String(
                        format: "%@ \"%@\" reaches %.1f m outside its park's boundary (at most %.0f m is tolerated)",
                        feature.kind, feature.name, outside, ParkImporter.boundaryTolerance), at: vertex)
                    return nil
                }
                let clipped = try zone.intersection(park).polygons()
                guard !clipped.polygons.isEmpty else {
                    self.fail(feature.index, geometryPointer, "\(feature.kind) \"\(feature.name)\" has no area inside the park",
                              at: area.boundingBox?.center)
                    return nil
                }
                return clipped
            case .points(let points):
                var union: GEOSGeometry?
                for (i, point) in points.enumerated() {
                    guard try prepared.covers(try context.point(point)) else {
                        let at = points.count == 1 ? geometryPointer.appending("coordinates") : geometryPointer.appending("coordinates").appending(i)
                        self.fail(feature.index, at, "\(feature.kind) \"\(feature.name)\" at \(point) lies outside its park's boundary", at: point)
                        return nil
                    }
                    let ring = Geodesy.geodesicCircle(center: point, radius: feature.radius)
                    let circle = try context.geometry(Polygon(rings: [ring]))
                    if let previous = union { union = try previous.union(circle) } else { union = circle }
                }
                guard let union else { return nil }
                // A station near the fence: the zone stops at the park boundary.
                let clipped = try union.intersection(park).polygons()
                guard !clipped.polygons.isEmpty else {
                    self.fail(feature.index, geometryPointer, "the buffered zone has no area inside the park", at: BoundingBox(points)?.center)
                    return nil
                }
                return clipped
            }
        } catch {
            self.fail(feature.index, geometryPointer, "geometry could not be processed: \(error.message)")
            return nil
        }
    }
}
