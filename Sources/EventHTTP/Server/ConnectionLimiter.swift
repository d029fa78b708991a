import HTTPTypes

/// Counts open connections from the moment they are accepted, in total and per client
/// address, and says which rule a new connection breaks. Loop-thread confined.
///
/// A trusted proxy's connections (`exempt`) count only against the total: they carry many
/// clients' requests, whose own share the server checks per request instead.
///
/// ```swift
/// var limiter = ConnectionLimiter(total: 16_384, perClient: 512)
/// limiter.opened()                                  // at accept
/// switch limiter.admit(address: "10.0.0.7", exempt: false) { ... }
/// limiter.closed(address: "10.0.0.7")               // when the connection is freed
/// ```
struct ConnectionLimiter {
    /// What `admit` decided.
    enum Admission: Equatable {
        case admitted
        /// Over the server's total: refused at once (503, close) before the head is read.
        case overTotal(FramingRefusal)
        /// Over the client's share: its first request is answered as a refusal once its head
        /// is read, so an event stream gets 200 + `retry:` (as `EventSource` needs) and
        /// anything else 503.
        case overClient(FramingRefusal)
    }

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

    /// Counts the connection under its client address (unless `exempt`: a trusted proxy);
    /// says whether it may stay.
    mutating func admit(address: String, exempt: Bool) -> Admission {
        if !exempt { byAddress[address, default: 0] += 1 }
        if open > total {
            return .overTotal(FramingRefusal(status: .serviceUnavailable, detail: "The server is at its connection limit; retry shortly."))
        }
        if !exempt, perClient > 0, byAddress[address, default: 0] > perClient {
            return .overClient(FramingRefusal(status: .serviceUnavailable, detail: "Too many open connections from your address (at most \(perClient)); retry shortly."))
        }
        return .admitted
    }

    /// A connection was freed; `address` is what `admit` counted it under (nil if it never
    /// was, or it was exempt).
    mutating func closed(address: String?) {
        open -= 1
        guard let address, let count = byAddress[address] else { return }
        if count <= 1 { byAddress.removeValue(forKey: address) } else { byAddress[address] = count - 1 }
    }
}
