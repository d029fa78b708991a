import HTTPTypes

/// A path node's handlers by method. The served methods sit in fixed slots: finding one is a
/// switch over small strings, where a `[HTTPRequest.Method: …]` dictionary hashed the method's
/// name (SipHash) on every request. Methods outside `HTTPRequest.Method.served` (registered by
/// hand, never read from a socket) keep a dictionary.
struct RouteTable {
    typealias Route = (handler: RouteHandler, chain: Int)

    /// A registered route, boxed: a closure kept in a generic array is stored at maximal
    /// abstraction, and reading it back built a reabstraction thunk (an allocation) per request.
    final class Entry {
        let route: Route
        init(_ route: Route) { self.route = route }
    }

    private var slots: [Entry?] = Array(repeating: nil, count: HTTPRequest.Method.served.count)
    private var others: [HTTPRequest.Method: Route] = [:]

    var isEmpty: Bool { slots.allSatisfy { $0 == nil } && others.isEmpty }

    /// The methods with a handler, served ones first in `served` order.
    var methods: [HTTPRequest.Method] {
        HTTPRequest.Method.served.indices.filter { slots[$0] != nil }.map { HTTPRequest.Method.served[$0] }
            + others.keys.sorted { $0.rawValue < $1.rawValue }
    }

    subscript(method: HTTPRequest.Method) -> Route? {
        get {
            if let slot = method.servedIndex { return slots[slot]?.route }
            return others[method]
        }
        set {
            if let slot = method.servedIndex { slots[slot] = newValue.map(Entry.init) } else { others[method] = newValue }
        }
    }
}
