import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// The ride catalogue through the store interface, on either store: what a catalogue file adds
/// and a park file links, and what a search finds, in which order, with which filters.
@Suite("The ride catalogue in the store")
struct CatalogStoreTests {
    typealias World = ChallengeStoreTests.World

    static let millenniumForce: RideID = "cedar-point.millennium-force"
    static let magnum: RideID = "cedar-point.magnum-xl-200"
    static let raptor: RideID = "cedar-point.raptor"
    static let banshee: RideID = "kings-island.banshee"
    static let diamondback: RideID = "kings-island.diamondback"
    static let fenix: RideID = "toverland.fenix"
    static let carousel: RideID = "toverland.carousel"

    static func entry(_ id: RideID, _ name: String, type: RideType = .coaster, manufacturer: String? = nil, model: String? = nil,
                      height: Double? = nil, speed: Double? = nil, inversions: Int? = nil, opened: Int? = nil,
                      position: Coordinate? = nil) -> CatalogImport.Entry {
        CatalogImport.Entry(id: id, park: ParkID(rawValue: String(id.rawValue.split(separator: ".")[0])), name: name, type: type, status: .operating,
                            stats: RideStats(heightM: height, speedKmh: speed, inversions: inversions, manufacturer: manufacturer, model: model,
                                             opened: opened, material: type == .coaster ? "steel" : nil, source: "wikipedia"),
                            position: position)
    }

    /// Seven rides of three parks, the kind of entries `data/catalog` holds.
    static func file(bansheeHeight: Double = 51) -> CatalogImport {
        CatalogImport(attribution: "test", parks: [("cedar-point", "Cedar Point"), ("kings-island", "Kings Island"), ("toverland", "Toverland")], rides: [
            Self.entry(Self.millenniumForce, "Millennium Force", manufacturer: "Intamin", model: "Giga Coaster", height: 94, speed: 149.7, inversions: 0,
                       opened: 2000, position: Coordinate(lat: 41.4817, lon: -82.6881)),
            Self.entry(Self.magnum, "Magnum XL-200 (Cedar Point)", manufacturer: "Arrow Dynamics", model: "Hyper Coaster", height: 62.5, speed: 116,
                       inversions: 0, opened: 1989),
            Self.entry(Self.raptor, "Raptor", manufacturer: "Bolliger & Mabillard", model: "Inverted Coaster", height: 41, speed: 92, inversions: 6,
                       opened: 1994),
            Self.entry(Self.banshee, "Banshee", manufacturer: "Bolliger & Mabillard", model: "Inverted Coaster", height: bansheeHeight, speed: 109,
                       inversions: 7, opened: 2014),
            Self.entry(Self.diamondback, "Diamondback", manufacturer: "Bolliger & Mabillard", model: "Hyper Coaster", height: 70, speed: 129,
                       inversions: 0, opened: 2009),
            Self.entry(Self.fenix, "Fēnix", manufacturer: "Bolliger & Mabillard", model: "Wing Coaster", height: 40, speed: 95, inversions: 3,
                       opened: 2018),
            Self.entry(Self.carousel, "Carousel", type: .flat),
        ])
    }

    /// A park file of Cedar Point whose rides have ids and figures of their own.
    static func cedarPoint(_ rides: [(id: RideID, name: String, stats: RideStats)]) -> ParkDefinition {
        ParkDefinition(park: Park(id: "cedar-point", name: "Cedar Point", timeZone: "America/New_York", attribution: nil,
                                  boundary: World.square(lon: 12, lat: 40, side: 0.01)),
                       zones: [], rides: rides.map { Ride(id: $0.id, park: "cedar-point", name: $0.name, type: .coaster, status: .operating, stats: $0.stats) })
    }

    func search(_ w: World, _ text: String?, _ adjust: (inout CatalogQuery) -> Void = { _ in }) async throws -> CatalogResults {
        var query = CatalogQuery(text: text, sort: text == nil ? .name : .relevance, limit: 50)
        adjust(&query)
        return try await w.store.searchCatalog(query)
    }

    func ids(_ w: World, _ text: String?, _ adjust: (inout CatalogQuery) -> Void = { _ in }) async throws -> [RideID] {
        try await self.search(w, text, adjust).rides.map(\.id)
    }

    @Test func importAddsUpdatesAndMatchesFencedRidesOnce() async throws {
        let w = try await World()
        defer { w.remove() }
        // Cedar Point is loaded first, with Millennium Force's speed only, and a ride the file lacks.
        _ = try await w.store.replaceParks([Self.cedarPoint([(Self.millenniumForce, "Millennium Force", RideStats(speedKmh: 150)),
                                                             ("cedar-point.gatekeeper", "GateKeeper", RideStats())])])
        #expect(try await w.store.catalogCounts() == (rides: 2, parks: 1))
        let first = try await w.store.importCatalog(Self.file())
        #expect(first == CatalogImportSummary(added: 6, updated: 0, matchedFenced: 1, parks: 2))
        let force = try #require(try await w.store.catalogRide(Self.millenniumForce))
        #expect(force.fenced == Self.millenniumForce && force.park == CatalogPark(id: "cedar-point", name: "Cedar Point", fenced: true))
        // The park file's figure stands; the catalogue fills the ones it lacks.
        #expect(force.stats.speedKmh == 150 && force.stats.heightM == 94 && force.stats.manufacturer == "Intamin")
        #expect(force.position == Coordinate(lat: 41.4817, lon: -82.6881) && force.lists == 0)
        let banshee = try #require(try await w.store.catalogRide(Self.banshee))
        #expect(banshee.fenced == nil && banshee.park == CatalogPark(id: "kings-island", name: "Kings Island", fenced: false))
        #expect(banshee.stats.inversions == 7 && banshee.status == .operating && banshee.type == .coaster)
        #expect(try await w.store.catalogCounts() == (rides: 8, parks: 3))

        // The same file again changes nothing; a changed figure is an update.
        #expect(try await w.store.importCatalog(Self.file()) == CatalogImportSummary(added: 0, updated: 0, matchedFenced: 1, parks: 0))
        #expect(try await w.store.importCatalog(Self.file(bansheeHeight: 52)) == CatalogImportSummary(added: 0, updated: 1, matchedFenced: 1, parks: 0))
        #expect(try await w.store.catalogRide(Self.banshee)?.stats.heightM == 52)
        #expect(try await w.store.catalogCounts() == (rides: 8, parks: 3))
        #expect(try await w.store.catalogRide("nowhere.nothing") == nil)
        #expect(try await w.store.catalogPark("toverland") == CatalogPark(id: "toverland", name: "Toverland", fenced: false))
        #expect(try await w.store.catalogPark("nowhere") == nil)
    }

    @Test func aParkFileLinksTheEntriesListsHold() async throws {
        let w = try await World()
        defer { w.remove() }
        _ = try await w.store.importCatalog(Self.file())
        #expect(try await w.store.catalogRide(Self.magnum)?.fenced == nil)
        let ann = try await w.user("ann")
        let list = try await w.store.createList(ListDraft(title: "Ohio coasters"), owner: ann, rules: ListRules(), privacy: LocationPrivacy()).id
        let magnumItem = try await w.store.addItem(to: list, owner: ann, target: .ride(Self.magnum), note: nil, position: nil, rules: ListRules(),
                                                   privacy: LocationPrivacy())
        #expect(magnumItem.ride?.fenced == nil && magnumItem.ride?.lists == 1)

        // The park file names its rides its own way: the entries of the same park and match key
        // are linked, keep their ids, and take the file's names and figures.
        _ = try await w.store.replaceParks([Self.cedarPoint([("cedar-point.mf", "Millennium Force", RideStats(speedKmh: 150)),
                                                             ("cedar-point.magnum", "Magnum XL-200", RideStats(lengthM: 1_541))])])
        let magnum = try #require(try await w.store.catalogRide(Self.magnum))
        #expect(magnum.fenced == "cedar-point.magnum" && magnum.name == "Magnum XL-200" && magnum.park.fenced)
        #expect(magnum.stats.lengthM == 1_541 && magnum.stats.heightM == 62.5 && magnum.lists == 1)
        #expect(try await w.store.catalogRide("cedar-point.mf")?.id == Self.millenniumForce)
        #expect(try await w.store.catalogCounts() == (rides: 7, parks: 3))
        let items = try #require(try await w.store.items(of: list, viewer: ann, sort: .custom, privacy: LocationPrivacy(), limit: 10, offset: 0))
        #expect(items.map(\.target) == [.ride(Self.magnum)] && items.first?.ride?.fenced == "cedar-point.magnum")

        // Logging the fenced ride checks the entry the list holds.
        _ = try await w.checkIn(ann, "cedar-point")
        try await w.ride(ann, "cedar-point.magnum")
        let checked = try #require(try await w.store.items(of: list, viewer: ann, sort: .custom, privacy: LocationPrivacy(), limit: 10, offset: 0))
        #expect(checked.first?.check == ListCheck(at: w.now, source: .rideLog))

        // A catalogue park that a park file loads under another id becomes that park, its rides
        // and its place in lists with it.
        _ = try await w.store.importCatalog(CatalogImport(attribution: nil, parks: [("alpha-land", "Alpha")],
                                                          rides: [Self.entry("alpha-land.wooden-one", "Wooden One", height: 30)]))
        _ = try await w.store.addItem(to: list, owner: ann, target: .park("alpha-land"), note: "go", position: 0, rules: ListRules(),
                                      privacy: LocationPrivacy())
        _ = try await w.store.replaceParks([World.park(World.alpha, lon: 10)])
        #expect(try await w.store.catalogPark("alpha-land") == nil)
        #expect(try await w.store.catalogPark(World.alpha) == CatalogPark(id: World.alpha, name: "Alpha", fenced: true))
        #expect(try await w.store.catalogRide("alpha-land.wooden-one")?.park.id == World.alpha)
        let moved = try #require(try await w.store.items(of: list, viewer: ann, sort: .custom, privacy: LocationPrivacy(), limit: 10, offset: 0))
        #expect(moved.map(\.target) == [.park(World.alpha), .ride(Self.magnum)] && moved.first?.park?.fenced == true && moved.first?.note == "go")
        #expect(try await self.ids(w, "wooden alpha") == ["alpha-land.wooden-one"])
    }

    @Test func searchFindsPrefixesFoldedWordsAndAbbreviations() async throws {
        let w = try await World()
        defer { w.remove() }
        _ = try await w.store.importCatalog(Self.file())
        #expect(try await self.ids(w, "mill") == [Self.millenniumForce])
        #expect(try await self.ids(w, "fenix") == [Self.fenix])
        #expect(try await self.ids(w, "FĒNIX") == [Self.fenix])
        #expect(try await self.ids(w, "b&m hyper") == [Self.diamondback])
        #expect(try await self.ids(w, "B & M", { $0.sort = .name }) == [Self.banshee, Self.diamondback, Self.fenix, Self.raptor])
        // The name weighs more than the details: Raptor's own name first.
        #expect(try await self.ids(w, "raptor").first == Self.raptor)
        #expect(try await self.ids(w, "cedar point giga") == [Self.millenniumForce])
        let exact = try await self.search(w, "magnum")
        #expect(exact.rides.map(\.id) == [Self.magnum] && !exact.approximate)

        // A word one letter off finds the ride by its spelling, and says so.
        let typo = try await self.search(w, "millenium")
        #expect(typo.approximate && typo.rides.map(\.id) == [Self.millenniumForce])
        let nothing = try await self.search(w, "zzzzqqq")
        #expect(nothing.rides.isEmpty && !nothing.approximate)

        // FTS5 syntax is plain words.
        for text in ["\"raptor\"", "raptor*", "-raptor", "raptor OR", "NEAR(raptor)", "raptor AND \"", "raptor:", "(raptor"] {
            let found = try await self.search(w, text)
            #expect(found.rides.first?.id == Self.raptor, "\(text)")
        }
        #expect(try await self.ids(w, "*\"-").count == 7)

        // Parks whose names hold the words, without ride filters only.
        let cedar = try await self.search(w, "cedar")
        #expect(cedar.parks == [CatalogPark(id: "cedar-point", name: "Cedar Point", fenced: false)])
        #expect(Set(cedar.rides.map(\.id)) == [Self.millenniumForce, Self.magnum, Self.raptor])
        #expect(try await self.search(w, "kings isl").parks.map(\.id) == ["kings-island"])
        #expect(try await self.search(w, "cedar", { $0.type = .coaster }).parks.isEmpty)
    }

    /// Both stores weigh a misspelt query's candidates by their folded names: the value is the
    /// core rule's for the names themselves.
    @Test(arguments: ["Millennium Force", "Magnum XL-200 (Cedar Point)", "Fēnix", "The Beast", "X", "Apollo's Chariot"])
    func similarityOfAFoldedNameIsTheCoreRule(_ name: String) {
        for terms in [["millenium"], ["bansee", "force"], ["beast"], ["x"], ["fenix", "zz"], ["apollos", "chariot"]] {
            #expect(CatalogText.similarity(terms.map { CatalogText.trigrams(Substring($0)) }, folded: CatalogText.nameDocument(name))
                    == CatalogText.similarity(terms, name), "\(terms)")
        }
    }

    @Test func searchFiltersSortsAndPages() async throws {
        let w = try await World()
        defer { w.remove() }
        _ = try await w.store.importCatalog(Self.file())
        let all = [Self.banshee, Self.carousel, Self.diamondback, Self.fenix, Self.magnum, Self.millenniumForce, Self.raptor]
        #expect(try await self.ids(w, nil) == all)
        #expect(try await self.ids(w, nil, { $0.limit = 2; $0.offset = 2 }) == [Self.diamondback, Self.fenix])
        #expect(try await self.ids(w, nil, { $0.offset = 7 }).isEmpty)
        #expect(try await self.ids(w, "coaster", { $0.sort = .name; $0.limit = 2; $0.offset = 1 }) == [Self.diamondback, Self.fenix])
        #expect(try await self.ids(w, nil, { $0.sort = .height })
                == [Self.millenniumForce, Self.diamondback, Self.magnum, Self.banshee, Self.raptor, Self.fenix, Self.carousel])
        #expect(try await self.ids(w, nil, { $0.sort = .speed })
                == [Self.millenniumForce, Self.diamondback, Self.magnum, Self.banshee, Self.fenix, Self.raptor, Self.carousel])
        #expect(try await self.ids(w, nil, { $0.park = "kings-island" }) == [Self.banshee, Self.diamondback])
        #expect(try await self.ids(w, nil, { $0.type = .flat }) == [Self.carousel])
        for manufacturer in ["b&m", "B & M", "bolliger", "Bolliger & Mabillard"] {
            #expect(try await self.ids(w, nil, { $0.manufacturer = manufacturer }) == [Self.banshee, Self.diamondback, Self.fenix, Self.raptor],
                    "\(manufacturer)")
        }
        #expect(try await self.ids(w, nil, { $0.manufacturer = "intamin" }) == [Self.millenniumForce])
        #expect(try await self.ids(w, nil, { $0.manufacturer = "&" }).isEmpty)
        #expect(try await self.ids(w, nil, { $0.minHeightM = 60 }) == [Self.diamondback, Self.magnum, Self.millenniumForce])
        #expect(try await self.ids(w, nil, { $0.minSpeedKmh = 120 }) == [Self.diamondback, Self.millenniumForce])
        #expect(try await self.ids(w, nil, { $0.minInversions = 6 }) == [Self.banshee, Self.raptor])
        #expect(try await self.ids(w, nil, { $0.openedFrom = 2010 }) == [Self.banshee, Self.fenix])
        #expect(try await self.ids(w, nil, { $0.openedTo = 1995 }) == [Self.magnum, Self.raptor])
        #expect(try await self.ids(w, "coaster", { $0.park = "toverland" }) == [Self.fenix])
        #expect(try await self.ids(w, "inverted", { $0.sort = .height }) == [Self.banshee, Self.raptor])
        // Filters hold for a misspelt word too.
        let typo = try await self.search(w, "bansee", { $0.minInversions = 7 })
        #expect(typo.approximate && typo.rides.map(\.id) == [Self.banshee])
        #expect(try await self.ids(w, "bansee", { $0.park = "toverland" }).isEmpty)
    }
}

/// A database made before the catalogue: its parks and rides become the catalogue's first entries.
@Suite("The catalogue's migration", .enabled(if: TestDatabase.isSQLite))
struct CatalogMigrationTests {
    @Test func loadedParksAndRidesBecomeEntries() async throws {
        let file = try OldStore(upTo: "2026-11-28 challenges")
        defer { file.remove() }
        try await file.pool.write { db in
            try db.execute(sql: """
                INSERT INTO parks (id, name, time_zone, imported_at, boundary)
                VALUES ('toverland', 'Toverland', 'Europe/Amsterdam', 0, GeomFromText('MULTIPOLYGON(((5.9 51.39, 5.91 51.39, 5.91 51.4, 5.9 51.39)))', 4326));
                INSERT INTO rides (id, park_id, name, type, status, height_m, manufacturer, model)
                VALUES ('toverland.fenix', 'toverland', 'Fēnix', 'coaster', 'operating', 40, 'Bolliger & Mabillard', 'Wing Coaster');
                """)
        }
        try file.pool.close()
        let store = try SpatiaLiteStore(path: file.path)
        defer { try? store.close() }
        let fenix = try #require(try await store.catalogRide("toverland.fenix"))
        #expect(fenix.fenced == "toverland.fenix" && fenix.park == CatalogPark(id: "toverland", name: "Toverland", fenced: true))
        #expect(fenix.name == "Fēnix" && fenix.stats.heightM == 40 && fenix.lists == 0)
        let found = try await store.searchCatalog(CatalogQuery(text: "fenix b&m"))
        #expect(found.rides.map(\.id) == ["toverland.fenix"] && found.parks.isEmpty)
        #expect(try await store.searchCatalog(CatalogQuery(text: "toverland")).parks.map(\.id) == ["toverland"])
    }
}
