import CoasterCore
import Foundation

/// The parts of a catalogue search both stores do in Swift around their own SQL, so that the same
/// query finds the same rides in the same order on either (docs: Catalogue).
enum CatalogSearch {
    /// Typo candidates a store reads at most (the rides sharing most trigrams with the words):
    /// ``CatalogText/similarity(_:_:)`` is computed for these only, so a misspelt query costs the
    /// same whatever the catalogue's size.
    static let typoCandidates = 200

    /// The prefixes of `manufacturer_key` (``CatalogText/fold(_:)`` of the manufacturer, with a
    /// space after it) that a manufacturer filter matches: its ``CatalogText/matchKey(_:)``, and
    /// the manufacturer an abbreviation stands for, so that "b&m", "B & M" and "bolliger" all
    /// find Bolliger & Mabillard. Empty for a filter with no letters or digits.
    static func manufacturerPrefixes(_ filter: String) -> [String] {
        let key = CatalogText.matchKey(filter)
        guard !key.isEmpty else { return [] }
        let compact = key.replacingOccurrences(of: " ", with: "")
        var prefixes = [key]
        for (manufacturer, alias) in CatalogText.aliases where alias == compact && !prefixes.contains(manufacturer) {
            prefixes.append(manufacturer)
        }
        return prefixes
    }

    /// The trigrams a store looks a misspelt query's candidates up by: each word's own (not
    /// padded; a word of fewer than three letters has none), in a stable order.
    static func candidateTrigrams(_ terms: [String]) -> [String] {
        var grams = Set<String>()
        for term in terms {
            let letters = Array(term)
            guard letters.count >= 3 else { continue }
            for i in 0...(letters.count - 3) { grams.insert(String(letters[i..<(i + 3)])) }
        }
        return grams.sorted()
    }

    /// A misspelt query's candidate as a store reads it: its key in the store (`T`), its name's
    /// ``CatalogText/nameDocument(_:)``, its name key and id (the order of equally alike names).
    struct Candidate<T> {
        var key: T
        var nameDocument: String
        var nameKey: String
        var id: String
    }

    /// The approximate answer from the candidates: those spelt alike enough, most alike first, then
    /// by name key and id; the keys of one page of them, and whether there were any at all.
    static func approximate<T>(_ candidates: [Candidate<T>], terms: [String], limit: Int, offset: Int) -> (page: [T], any: Bool) {
        let grams = terms.map { CatalogText.trigrams(Substring($0)) }
        let alike = candidates.compactMap { candidate -> (Candidate<T>, Double)? in
            let score = CatalogText.similarity(grams, folded: candidate.nameDocument)
            return score >= CatalogText.typoThreshold ? (candidate, score) : nil
        }.sorted { a, b in
            if a.1 != b.1 { return a.1 > b.1 }
            return (a.0.nameKey, a.0.id) < (b.0.nameKey, b.0.id)
        }
        return (Array(alike.dropFirst(offset).prefix(limit).map(\.0.key)), !alike.isEmpty)
    }

    /// Whether a query's filters narrow the rides (parks are answered only without them).
    static func hasRideFilter(_ query: CatalogQuery) -> Bool {
        query.park != nil || query.type != nil || query.manufacturer != nil || query.minHeightM != nil || query.minSpeedKmh != nil
            || query.minInversions != nil || query.openedFrom != nil || query.openedTo != nil
    }
}
