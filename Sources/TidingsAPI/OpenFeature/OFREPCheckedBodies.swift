import Foundation

/// The last few evaluation bodies the scan found to be evaluation requests, kept as bytes: a body
/// equal to one of them, byte for byte, is one too (the verdict depends on the bytes alone), so it
/// is checked by one `memcmp` instead of a scan.
///
/// Why: providers send the same body again and again. A server-side provider evaluating several
/// flags for one request of its own POSTs each `/ofrep/v1/evaluate/flags/{key}` with the same
/// evaluation context, and a web provider sends its one static context on every bulk refetch.
/// The scan costs about 200 instructions a member (a 1 KB context: ~5,500, as much as a sixth of a
/// whole cached answer); comparing 1 KB costs about 150. A body not seen before costs the scan as
/// before, plus a comparison with each kept body of the same length (stopping at the first byte
/// that differs) and a copy of it.
///
/// Bounded: ``slots`` bodies of at most ``maxBytes`` each, in one buffer allocated once; a larger
/// body is never kept. Only bodies the scan decided are kept — its verdict is the full reading's
/// (the `body` fuzz target holds it to that) — so nothing is accepted here that the scan would
/// not accept. Confined to the loop (the main actor), like the scan's own working memory.
enum OFREPCheckedBodies {
    /// How many bodies are kept (the oldest goes first).
    static let slots = 8
    /// The largest body kept (providers' contexts are well under this).
    static let maxBytes = 4 << 10

    nonisolated(unsafe) private static let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: slots * maxBytes)
    /// Each slot's length; 0: empty (an empty body is not an evaluation request, so none is kept).
    nonisolated(unsafe) private static let lengths: UnsafeMutablePointer<Int> = {
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: slots)
        lengths.initialize(repeating: 0, count: slots)
        return lengths
    }()
    nonisolated(unsafe) private static var next = 0

    /// Whether `body` is, byte for byte, one of the kept bodies.
    @MainActor
    static func contains(_ body: [UInt8]) -> Bool {
        let count = body.count
        guard count > 0, count <= maxBytes else { return false }
        return body.withUnsafeBufferPointer { bytes in
            for slot in 0..<slots where lengths[slot] == count {
                if memcmp(storage + slot * maxBytes, bytes.baseAddress!, count) == 0 { return true }
            }
            return false
        }
    }

    /// Keeps `body`, which the scan found to be an evaluation request, in place of the oldest.
    @MainActor
    static func remember(_ body: [UInt8]) {
        let count = body.count
        guard count > 0, count <= maxBytes else { return }
        let slot = next
        next = (next + 1) % slots
        body.withUnsafeBufferPointer { bytes in
            (storage + slot * maxBytes).update(from: bytes.baseAddress!, count: count)
        }
        lengths[slot] = count
    }

    /// Forgets every kept body (for tests that measure the scan itself).
    @MainActor
    static func forget() {
        lengths.update(repeating: 0, count: slots)
    }
}
