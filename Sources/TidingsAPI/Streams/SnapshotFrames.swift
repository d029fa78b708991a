/// The frames of opening snapshots, encoded once per revision and shared by every stream that
/// opens at that revision: a queued frame is an array the worker only reads, so a thousand
/// streams waiting on one 2 MB posts snapshot hold one copy of it, not a thousand (each stream
/// that did not read kept its own before: 1.9 MiB per stream with a 2 MB feed).
///
/// Holds one revision's frames (a posts document of up to 8 MiB, the thing list, each
/// preference); they are dropped when a snapshot at another revision is asked for, and on a
/// reload (memory rebuilt from the store: the same revision number may then show other data).
@MainActor
final class SnapshotFrames {
    private var revision: UInt64?
    private var frames: [String: [UInt8]] = [:]

    /// The frame for `part` (`"things"`, `"posts"`, `"preference:<key>"`) at `revision`.
    func frame(_ part: String, revision: UInt64, encode: () -> [UInt8]) -> [UInt8] {
        if self.revision != revision {
            self.revision = revision
            frames = [:]
        }
        if let frame = frames[part] { return frame }
        let frame = encode()
        frames[part] = frame
        return frame
    }

    /// Forgets every frame.
    func clear() {
        revision = nil
        frames = [:]
    }
}
