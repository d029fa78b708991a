#if DEBUG
import Synchronization

/// What checking and decoding preference values has cost in this process, counted in debug
/// builds only (release builds pay nothing): tests prove with it that a write checks each
/// value once and decodes its JSON once, however many layers it passes (issue #25).
enum ValueWork {
    /// Calls of ``PreferenceDeclaration/check(_:)``.
    static let checks = Atomic<Int>(0)
    /// Values decoded from JSON (``PreferenceValue`` or ``PreferenceInput``).
    static let decodes = Atomic<Int>(0)

    static func countCheck() { checks.add(1, ordering: .relaxed) }
    static func countDecode() { decodes.add(1, ordering: .relaxed) }

    /// Both counts so far.
    static var counts: (decodes: Int, checks: Int) {
        (decodes.load(ordering: .relaxed), checks.load(ordering: .relaxed))
    }
}
#endif
