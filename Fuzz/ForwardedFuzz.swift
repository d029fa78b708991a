// libFuzzer target over the forwarding fields a trusted proxy passes on (TrustedProxies):
// `X-Forwarded-For` and `Forwarded: for=` chains of any shape, and CIDR ranges as configured.
// Whatever arrives, the client named is the peer, `unknown`, or an address that parses, never
// one left of an address that does not.
import Foundation
import HTTPTypes
@testable import EventHTTP

private let proxies = try! TrustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    var headers = HTTPFields()
    for (index, part) in parts.dropLast().enumerated() {
        // Invalid bytes become spaces, as from evhttp; CR and LF never reach a field.
        let value = String(part.map { $0 == "\r" || $0 == "\n" ? " " : $0 })
        headers.append(HTTPField(name: index % 2 == 0 ? .xForwardedFor : .forwarded, value: value))
    }
    let peer = ["127.0.0.1", "10.9.8.7", "192.0.2.1", "fd00::1"][size % 4]
    let client = proxies.client(peer: peer, headers: headers)
    precondition(client == peer || client == "unknown" || AddressBytes.parse(client) != nil, "client \(client)")
    if !proxies.contains(peer) { precondition(client == peer, "an untrusted peer's fields were believed") }
    // A configured range: parsing any text either fails or gives a range containing its own address.
    if let last = parts.last, let range = TrustedProxies.Range(last) {
        _ = range.description
    }
    return 0
}
