import Foundation
import TidingsTesting

/// Runs `body(index)` on `count` real threads at once (not a GCD pool, which would cap them at
/// the core count while they block on sockets) and returns when every one has finished.
func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}
