import Foundation

/// A small hash table keyed by a path's UTF-8 bytes: the router's resolved paths, a cache.
///
/// `Dictionary<String, …>` hashes a key with SipHash and compares it through the general string
/// comparison, about 0.7K instructions for `/preferences/name`; here a lookup is one FNV-1a
/// pass over the path's bytes (from a per-process random basis), a compare of stored hashes and
/// one `memcmp`. Open addressing with linear probing, kept at most half full; entries are only
/// added, replaced or all removed. Paths come from clients, and FNV is no defence against
/// chosen collisions, so a probe never goes further than `maxProbe` slots: a path that would
/// land further is not stored (the router then walks its tree, as for any uncached path), and
/// a lookup costs at most `maxProbe` compares whatever the paths stored.
struct PathTable<Value> {
    /// 0 marks an empty slot (a path's hash is never 0).
    private var hashes: [UInt64]
    private var paths: [String]
    private var values: [Value?]
    private(set) var count = 0
    static var maxProbe: Int { 8 }

    init() {
        hashes = Array(repeating: 0, count: 16)
        paths = Array(repeating: "", count: 16)
        values = Array(repeating: nil, count: 16)
    }

    /// The value stored for `path`, if any.
    func value(for path: String) -> Value? {
        var path = path
        let (slot, found) = path.withUTF8 { find($0) }
        return found ? values[slot] : nil
    }

    /// Stores `value` for `path`, replacing an earlier one; false when no slot within
    /// `maxProbe` of the path's own is free even in the sparsest table allowed (nothing stored).
    ///
    /// Linear probing at half full leaves runs of taken slots: with the basis drawn at random,
    /// a few paths in a hundred land before a run longer than `maxProbe`. Refused, such a path
    /// was never cached for the life of the process — a `/preferences/name` that walked the
    /// route tree on every request in one process start out of a few (~10K instructions a
    /// request more). So a path that finds no slot grows the table, which spreads the run,
    /// down to one entry in `sparsest` slots; only paths whose hashes collide outright (chosen
    /// ones) still find none, and the table stays bounded.
    @discardableResult
    mutating func set(_ value: Value, for path: String) -> Bool {
        if (count + 1) * 2 > hashes.count { grow() }
        if place(value, for: path) { return true }
        while hashes.count < Self.sparsest * (count + 1) {
            grow()
            if place(value, for: path) { return true }
        }
        return false
    }

    /// The most slots per entry a table grows to for a path that found no slot.
    static var sparsest: Int { 8 }

    /// Stores `value` for `path` in a slot within `maxProbe` of its own; false when there is none.
    private mutating func place(_ value: Value, for path: String) -> Bool {
        var key = path
        let (slot, found, hash) = key.withUTF8 { bytes in
            let (slot, found) = find(bytes)
            return (slot, found, Self.hash(bytes))
        }
        guard slot >= 0 else { return false }
        if !found {
            hashes[slot] = hash
            paths[slot] = path
            count += 1
        }
        values[slot] = value
        return true
    }

    mutating func removeAll() {
        self = PathTable()
    }

    /// The slot holding `bytes`, or the empty slot where they would go (-1: none within
    /// `maxProbe` slots).
    private func find(_ bytes: UnsafeBufferPointer<UInt8>) -> (slot: Int, found: Bool) {
        let hash = Self.hash(bytes)
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        for _ in 0..<Self.maxProbe {
            let stored = hashes[slot]
            if stored == 0 { return (slot, false) }
            if stored == hash, Self.equal(paths[slot], bytes) { return (slot, true) }
            slot = (slot + 1) & mask
        }
        return (-1, false)
    }

    private mutating func grow() {
        let old = (paths: paths, values: values, hashes: hashes)
        let size = hashes.count * 2
        hashes = Array(repeating: 0, count: size)
        paths = Array(repeating: "", count: size)
        values = Array(repeating: nil, count: size)
        count = 0
        // Every entry fits again but for chosen collisions (a larger table only spreads runs).
        for slot in old.hashes.indices where old.hashes[slot] != 0 {
            if let value = old.values[slot] { _ = place(value, for: old.paths[slot]) }
        }
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = pathHashBasis
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        // Fold the high bits in (the slot uses the low ones); 0 is reserved for empty slots.
        hash ^= hash >> 32
        return hash == 0 ? 1 : hash
    }

    private static func equal(_ stored: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var stored = stored
        return stored.withUTF8 { own in
            own.count == bytes.count && (own.isEmpty || memcmp(own.baseAddress!, bytes.baseAddress!, own.count) == 0)
        }
    }
}

/// FNV-1a's offset basis mixed with a per-process random number (a generic type cannot hold it).
private let pathHashBasis: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64.random(in: 0...UInt64.max)
