/// Secret comparison whose running time does not depend on where the inputs differ, so a
/// client timing many guesses learns nothing about a token byte by byte.
enum ConstantTime {
    /// Whether `presented` equals `secret`. The loop always runs over all of `secret` and
    /// accumulates differences without branching on them; only `secret.count` (fixed per
    /// configured secret) shapes the time, never the presented bytes' content.
    static func equals(_ presented: [UInt8], _ secret: [UInt8]) -> Bool {
        var difference = UInt64(truncatingIfNeeded: presented.count ^ secret.count)
        let presentedCount = presented.count
        presented.withUnsafeBufferPointer { given in
            secret.withUnsafeBufferPointer { expected in
                for index in 0..<expected.count {
                    // Past the end of a shorter input compare against 0; the length
                    // difference above already makes the result false.
                    let byte = index < presentedCount ? given[index] : 0
                    difference |= UInt64(byte ^ expected[index])
                }
            }
        }
        return difference == 0
    }

    /// Whether `presented` equals any of `secrets`. Every secret is compared (no early exit),
    /// so the time does not reveal which one matched.
    static func matchesAny(_ presented: [UInt8], _ secrets: [[UInt8]]) -> Bool {
        var matched = false
        for secret in secrets {
            let equal = equals(presented, secret)
            matched = matched || equal
        }
        return matched
    }
}
