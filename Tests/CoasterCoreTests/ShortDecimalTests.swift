import CoasterCore
import Testing

@Suite("Short decimals")
struct ShortDecimalTests {
    static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { ShortDecimal.parse($0) }
    }

    /// Every short decimal it reads is `Double(String)`'s value bit for bit: random digit strings of
    /// every length and split, signs, zeros, the largest mantissas, halfway-looking fractions.
    @Test func readsAsDoubleDoesBitForBit() {
        var g = SeededGenerator(seed: 21)
        var read = 0
        for _ in 0..<200_000 {
            let integerDigits = Int.random(in: 1...15, using: &g)
            let fractionDigits = Int.random(in: 0...(15 - integerDigits), using: &g)
            func digits(_ n: Int) -> String {
                String((0..<n).map { _ in Character(String(Int.random(in: 0...9, using: &g))) })
            }
            var text = (Bool.random(using: &g) ? "-" : "") + digits(integerDigits)
            if fractionDigits > 0 { text += "." + digits(fractionDigits) }
            let expected = Double(text)!
            let value = Self.parse(text)
            #expect(value?.bitPattern == expected.bitPattern, "\(text)")
            read += value == nil ? 0 : 1
        }
        #expect(read == 200_000)
        for text in ["0", "-0", "0.0", "-0.000", "007", "999999999999999", "-99999999.9999999", "0.00000000000001", "9007199254740.99",
                     "41.241104", "-98.221950", "180", "-90.0", "10", "0.1", "0.3", "2.675", "1.005"] {
            #expect(Self.parse(text)?.bitPattern == Double(text)!.bitPattern, "\(text)")
        }
    }

    /// What is not `-digits(.digits)` of 15 digits at most is left to `Double(String)`.
    @Test func leavesEverythingElse() {
        for text in ["", "-", ".", "-.5", ".5", "5.", "+5", "1e5", "1E-3", " 1", "1 ", "1.2.3", "1,5", "0x10", "inf", "nan", "--1",
                     "1234567890123456", "0.0000000000000001", "12345678.12345678", "١٢", "1\u{0}"] {
            #expect(Self.parse(text) == nil, "\(text)")
        }
    }
}
