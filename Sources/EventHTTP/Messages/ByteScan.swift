#if canImport(Glibc)
import Glibc
#endif

/// Scans of contiguous bytes, for the per-request paths that see whole heads and targets.
///
/// Why: the generic `Sequence` algorithms (`allSatisfy`, `split`, `firstIndex(of:)`) step an
/// iterator through protocol witnesses per byte. Optimised away in a release build, that costs an
/// unoptimised build (the one the tests run) ~50 ns a byte: a 16 KiB head took 4 ms to frame and
/// route, and two clients sending such heads held the loop past the latency budget. These scan a
/// buffer pointer directly (`memchr` where it can), the same in every build.
enum ByteScan {
    /// Whether every byte of `bytes` is accepted.
    static func all(_ bytes: ArraySlice<UInt8>, _ accepts: (UInt8) -> Bool) -> Bool {
        bytes.withUnsafeBufferPointer { all($0, accepts) }
    }

    static func all(_ buffer: UnsafeBufferPointer<UInt8>, _ accepts: (UInt8) -> Bool) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var index = 0
        let count = buffer.count
        while index < count {
            if !accepts(base[index]) { return false }
            index += 1
        }
        return true
    }

    /// Whether `text` is exactly `literal`'s bytes: one `memcmp` over a native string's storage
    /// (`utf8.elementsEqual` steps two iterators, about 1,200 instructions for 16 bytes).
    static func equals(_ text: String, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard text.utf8.count == length else { return false }
        guard length > 0 else { return true }
        var text = text
        return text.withUTF8 { memcmp($0.baseAddress!, literal.utf8Start, length) == 0 }
    }

    /// The index (in `bytes`' own indices) of the first `byte`, or nil.
    static func firstIndex(of byte: UInt8, in bytes: ArraySlice<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            firstOffset(of: byte, in: buffer).map { bytes.startIndex + $0 }
        }
    }

    /// The offset of the first `byte` in `buffer`, or nil.
    static func firstOffset(of byte: UInt8, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = buffer.baseAddress, buffer.count > 0,
              let found = memchr(base, Int32(byte), buffer.count) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }
}
