/// SplitMix64: the same numbers for the same seed on every machine, for the benchmark's generated
/// world and for reproducible tests (not for anything secret).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(self.state)
    }

    /// SplitMix64's finaliser: a well-mixed 64-bit hash of `z`, also for hashing outside a sequence.
    public static func mix(_ z: UInt64) -> UInt64 {
        var z = z
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
