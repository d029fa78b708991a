internal import CLibevent
import HTTPTypes

/// evhttp's request (a complete C struct through http_struct.h).
typealias RawRequest = UnsafeMutablePointer<evhttp_request>

/// What the server knows about one client connection (`evhttp_connection`). Loop-thread
/// confined. evhttp handles one request at a time per connection, so there is at most one
/// current exchange.
final class Connection {
    let evcon: OpaquePointer
    var current: ConnectionExchange?

    init(evcon: OpaquePointer) { self.evcon = evcon }

    var bufferevent: OpaquePointer? { evhttp_connection_get_bufferevent(evcon) }

    /// Bytes waiting in the server's output buffer for this connection.
    var bufferedOutput: Int {
        guard let bev = bufferevent, let output = bufferevent_get_output(bev) else { return 0 }
        return evbuffer_get_length(output)
    }
}
