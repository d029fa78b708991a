internal import CLibevent

/// The request methods evhttp parses. `rawValue` is the token on the request line.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, CONNECT

    init?(_ command: evhttp_cmd_type) {
        switch command {
        case EVHTTP_REQ_GET: self = .GET
        case EVHTTP_REQ_HEAD: self = .HEAD
        case EVHTTP_REQ_POST: self = .POST
        case EVHTTP_REQ_PUT: self = .PUT
        case EVHTTP_REQ_PATCH: self = .PATCH
        case EVHTTP_REQ_DELETE: self = .DELETE
        case EVHTTP_REQ_OPTIONS: self = .OPTIONS
        case EVHTTP_REQ_TRACE: self = .TRACE
        case EVHTTP_REQ_CONNECT: self = .CONNECT
        default: return nil
        }
    }
}
