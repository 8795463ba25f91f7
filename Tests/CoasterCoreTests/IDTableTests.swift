@testable import CoasterCore
import Testing

@Suite("Id table")
struct IDTableTests {
    /// Against a dictionary of first positions: ids of every length around the eight-byte words
    /// (0…40 bytes, so tails of every size), some non-ASCII, some listed twice, and strings that
    /// are not ids (prefixes, ids one byte longer, changed in their last byte).
    @Test func findsWhatADictionaryFinds() {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789-.é🎢")
        for size in [0, 1, 2, 7, 8, 9, 100, 2_000] {
            var ids: [String] = []
            for _ in 0..<size {
                if !ids.isEmpty, Int.random(in: 0..<10, using: &random) == 0 {
                    ids.append(ids.randomElement(using: &random)!)
                } else {
                    let length = Int.random(in: 0...40, using: &random)
                    ids.append(String((0..<length).map { _ in alphabet.randomElement(using: &random)! }))
                }
            }
            let table = IDTable(ids)
            var first: [String: Int] = [:]
            for (i, id) in ids.enumerated() where first[id] == nil { first[id] = i }
            for id in ids { #expect(table.position(of: id) == first[id], "\(id.debugDescription) among \(size)") }
            var others = ["", "x", "park-47.ride-20", "park-47.ride-200"]
            for id in ids.prefix(200) {
                others.append(id + "a")
                if !id.isEmpty { others.append(String(id.dropLast())); others.append(String(id.dropLast()) + "~") }
            }
            for other in others { #expect(table.position(of: other) == first[other], "\(other.debugDescription) among \(size)") }
        }
    }

    /// The hash tells apart what a zero-padded last word would not: keys that differ only in
    /// trailing zero bytes, and every short key from every other.
    @Test func hashesKeysApart() {
        #expect(IDTable.hash("a") != IDTable.hash("a\u{0}"))
        #expect(IDTable.hash("") != IDTable.hash("\u{0}"))
        let keys = (0..<5_000).map { "park-\($0 / 50).ride-\($0 % 50)" }
        #expect(Set(keys.map(IDTable.hash)).count == keys.count)
    }
}
