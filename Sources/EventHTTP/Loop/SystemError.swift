import CLibevent
import Foundation

/// A failed C call and the `errno` it left, captured at once (any later call may overwrite
/// it), in the way of swift-nio's `IOError`. The one place EventHTTP reads `errno`.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    /// The C function that failed.
    public let call: String
    /// Its `errno`.
    public let code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// The failure of `call`, which has just returned its error value: reads `errno` now.
    static func last(_ call: String) -> SystemError { SystemError(call: call, code: tidings_errno()) }

    /// A failure that means "not now" rather than "broken": try again (when writable).
    var isTransient: Bool { code == EAGAIN || code == EWOULDBLOCK || code == EINTR }

    /// `strerror` text, e.g. "Address already in use".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "\(call): \(reason) (errno \(code))" }
}

/// Calls `body`, a C function that returns a negative value on failure and sets `errno`;
/// returns its result or throws the ``SystemError`` with that `errno`.
@inline(__always)
func syscall<Result: SignedInteger>(_ call: String, _ body: () -> Result) throws(SystemError) -> Result {
    let result = body()
    if result < 0 { throw SystemError.last(call) }
    return result
}

/// Calls `body`, a C function whose failure the caller lives with on purpose — `tolerating`
/// says why (an option that only tunes a socket, a wake-up that is already pending, memory
/// libevent could not get) — so that no C result is dropped unnamed with `_ =`. Returns the
/// failure (its `errno` read at once, in the one place that reads it) for a caller that logs it.
@discardableResult
@inline(__always)
func syscall<Result: SignedInteger>(_ call: StaticString, tolerating reason: StaticString,
                                    _ body: () -> Result) -> SystemError? {
    let result = body()
    return result < 0 ? SystemError.last("\(call)") : nil
}
