/// Waiting for work the in-process server does on its own (a timer: a schedule falling due).
extension InProcessTidings {
    /// Turns the main run loop (where the server's main-actor work runs) until `condition`
    /// holds or `timeout` seconds pass; false on timeout. The condition may send requests.
    public func wait(timeout: Double = 5, until condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            _ = runMainLoop(timeout: 0.05) { false }
        }
        return try condition()
    }
}
