/// Both stores compare stored text as bytes, as PostgreSQL does (`=`, `IS DISTINCT FROM` under
/// its deterministic collation) and SQLite's `BINARY` collation does — never with `String ==`,
/// which is canonical equivalence ("é" == "e\u{301}"). A store that compared canonically in
/// one place and as bytes in another could hold two things it would then call duplicates, so
/// a list read back and written again would be refused.
extension Array where Element == String {
    /// The first entry equal byte for byte to an earlier one (nil: no entry repeats).
    var firstRepeatedEntry: String? {
        var seen = Set<[UInt8]>(minimumCapacity: count)
        for entry in self where !seen.insert([UInt8](entry.utf8)).inserted { return entry }
        return nil
    }
}
