import HTTPTypes

/// Counts open connections from the moment they are accepted, in total and per client
/// address, and says which rule a new connection breaks. Loop-thread confined.
///
/// ```swift
/// var limiter = ConnectionLimiter(total: 16_384, perClient: 512)
/// limiter.opened()                                  // at accept
/// if let refusal = limiter.admit(address: "10.0.0.7") { ... 503, close }
/// limiter.closed(address: "10.0.0.7")               // when the connection is freed
/// ```
struct ConnectionLimiter {
    /// Connections accepted at once.
    var total: Int
    /// Connections one address may hold at once; 0 = no per-address cap.
    var perClient: Int
    private(set) var open = 0
    private var byAddress: [String: Int] = [:]

    init(total: Int, perClient: Int) {
        self.total = total
        self.perClient = perClient
    }

    /// A connection was accepted (its address is not known yet).
    mutating func opened() { open += 1 }

    /// Counts the connection under its client address; returns why it must be refused, if so.
    mutating func admit(address: String) -> FramingRefusal? {
        byAddress[address, default: 0] += 1
        if open > total {
            return FramingRefusal(status: .serviceUnavailable, detail: "The server is at its connection limit; retry shortly.")
        }
        if perClient > 0, byAddress[address, default: 0] > perClient {
            return FramingRefusal(status: .serviceUnavailable, detail: "Too many open connections from your address (at most \(perClient)); retry shortly.")
        }
        return nil
    }

    /// A connection was freed; `address` is what `admit` was given (nil if it never was).
    mutating func closed(address: String?) {
        open -= 1
        guard let address, let count = byAddress[address] else { return }
        if count <= 1 { byAddress.removeValue(forKey: address) } else { byAddress[address] = count - 1 }
    }
}
