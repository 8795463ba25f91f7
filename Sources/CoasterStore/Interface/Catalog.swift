import CoasterCore
import Foundation

/// The ride catalogue (docs: Catalogue): every park and ride the service knows, fenced or not.
///
/// Fenced rides enter it with their park: ``ParkStore/replaceParks(_:)`` gives each ride of a
/// loaded park its entry in the same transaction (the ride's own id), links an entry the
/// catalogue file made for it before (same park, same ``CatalogText/matchKey(_:)``: the entry
/// keeps its id, so lists keep holding it), refreshes name, land, status and figures from the
/// park file (a figure the file lacks keeps the catalogue's), and marks the park fenced.
public protocol CatalogStore: Sendable {
    /// Adds or updates the entries of a checked catalogue file in one transaction. An entry that
    /// names a ride a park file fences (same park and match key) adds nothing: it fills the
    /// figures the fenced ride's entry lacks. Importing the same file twice changes nothing.
    func importCatalog(_ file: CatalogImport) async throws -> CatalogImportSummary

    /// One page of rides that hold every term of ``CatalogText/terms(_:)`` as a word prefix in
    /// their name or details (FTS5 on SQLite, `tsvector` on PostgreSQL; the stored documents are
    /// ``CatalogText/nameDocument(_:)`` and ``CatalogText/detailDocument(park:land:type:stats:)``,
    /// the name weighted above the rest), filtered and sorted as asked. When words find no ride,
    /// the rides whose names are spelt alike instead (trigrams: FTS5's trigram tokenizer on
    /// SQLite, `pg_trgm` on PostgreSQL, for candidates; ``CatalogText/similarity(_:_:)`` at
    /// least ``CatalogText/typoThreshold`` decides and orders, so both stores agree), with
    /// `approximate` set. Work is bounded: at most ``CatalogLimits/mostTerms`` terms, a page of
    /// at most ``CatalogLimits/largestPage``, an offset of at most ``CatalogLimits/deepestOffset``.
    func searchCatalog(_ query: CatalogQuery) async throws -> CatalogResults

    /// The entry with this id, or whose fenced ride has it; `nil` if none.
    func catalogRide(_ id: RideID) async throws -> CatalogRide?

    /// The catalogue's park with this id, or `nil`.
    func catalogPark(_ id: ParkID) async throws -> CatalogPark?

    /// How many rides and parks the catalogue holds (for `/ready` and the import's summary).
    func catalogCounts() async throws -> (rides: Int, parks: Int)
}
