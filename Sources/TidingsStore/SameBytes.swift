#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Whether the two strings are the same UTF-8 bytes: JSON's equality (same code points),
    /// not `==`'s canonical equivalence (`"é"` and `"e\u{301}"` differ here). One `memcmp` over
    /// native storage; `utf8.elementsEqual` steps two iterators, about 5 ns a byte, which was a
    /// third of the server's CPU for a 60 KB preference write (compared on validation and again
    /// against the stored value). Observing has the same helper; this module does not depend on it.
    func hasSameUTF8(as other: String) -> Bool {
        let count = utf8.count
        guard count == other.utf8.count else { return false }
        guard count > 0 else { return true }
        let compared = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                memcmp(mine.baseAddress!, theirs.baseAddress!, count) == 0
            }
        }
        if case let same?? = compared { return same }
        return utf8.elementsEqual(other.utf8)   // a bridged or foreign string: no contiguous bytes
    }
}
