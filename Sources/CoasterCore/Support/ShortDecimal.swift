/// Short decimals read without the C library: `-?digits(.digits)?` of at most 15 digits in all,
/// the form coordinates and accuracies come in (`41.241104`, `-98.221950`, `10`).
///
/// Such a number is an integer below 2⁵³ over a power of ten up to 10¹⁵, both exactly a `Double`,
/// so one IEEE division gives the correctly rounded value (Clinger's fast path): the value
/// `Double(String)` gives, bit for bit, which a test holds it to. `strtod` behind `Double(String)`
/// took ~0.4 µs of a locate request's three numbers. Anything else (an exponent, a `+`, a leading
/// or trailing dot, more digits, spaces) is `nil`, for the caller to read with `Double(_:)`.
public enum ShortDecimal {
    /// The most digits read: 10¹⁵ − 1 < 2⁵³.
    static let maximumDigits = 15

    private static let powersOfTen: [Double] = (0...15).map { k in (0..<k).reduce(1.0) { value, _ in value * 10 } }

    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0, mantissa: UInt64 = 0, digits = 0, fraction = 0
        let negative = i < bytes.count && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let integerStart = i
        while i < bytes.count, let digit = Self.digit(bytes[i]) {
            mantissa = mantissa &* 10 &+ digit
            digits += 1
            i += 1
        }
        guard i > integerStart else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fractionStart = i
            while i < bytes.count, let digit = Self.digit(bytes[i]) {
                mantissa = mantissa &* 10 &+ digit
                digits += 1
                i += 1
            }
            fraction = i - fractionStart
            guard fraction > 0 else { return nil }
        }
        // Past 15 digits the mantissa may have wrapped, but then it is not used.
        guard i == bytes.count, digits <= Self.maximumDigits else { return nil }
        let magnitude = Double(mantissa) / Self.powersOfTen[fraction]
        return negative ? -magnitude : magnitude
    }

    @inline(__always)
    private static func digit(_ byte: UInt8) -> UInt64? {
        byte &- UInt8(ascii: "0") < 10 ? UInt64(byte &- UInt8(ascii: "0")) : nil
    }
}
