import Foundation

/// Calls `body`, a C function that returns a negative value and sets `errno` on failure, and
/// returns its result or throws ``StoreError/database(_:)`` naming `what` failed and why. The
/// one place TidingsStore reads `errno` (at once, before any other call can overwrite it); an
/// interrupted call (`EINTR`) is repeated when `retryingInterrupted`.
@discardableResult
func systemCall(_ what: @autoclosure () -> String, retryingInterrupted: Bool = false,
                _ body: () -> Int32) throws -> Int32 {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if retryingInterrupted, code == EINTR { continue }
        throw StoreError.database("\(what()): \(String(cString: strerror(code))) (errno \(code))")
    }
}

/// Calls `body`, a C function whose failure the caller lives with on purpose (`tolerating`
/// says why), so that no result is dropped unnamed.
func systemCall(_ what: StaticString, tolerating reason: StaticString, _ body: () -> Int32) {
    _ = try? systemCall("\(what)", body)
}
