// libFuzzer target over what a feed's upstream sends the posts client (CurlReceiver): head
// lines and body pieces of any shape and size, in any order, and `Location`s of any shape for
// the same-origin rule (Origin). Whatever arrives: the body never passes the limit, the head
// never passes its bound, a refusal is sticky, and a redirect is followed only to the origin.
import Foundation

private let limit = 1024

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Pieces split at NUL: those starting with 0x01 are body pieces, the others head lines.
    let receiver = CurlReceiver(limit: limit)
    var headBytes = 0
    for piece in bytes.split(separator: 0, omittingEmptySubsequences: false) {
        let kept = piece.withUnsafeBytes { raw -> Bool in
            if piece.first == 1 { return receiver.receiveBody(UnsafeRawBufferPointer(rebasing: raw.dropFirst())) }
            headBytes += raw.count
            return receiver.receiveHead(raw)
        }
        precondition(receiver.body.count <= limit, "body \(receiver.body.count) over the limit")
        if !kept { precondition(receiver.failure != nil, "stopped without a reason") }
        if headBytes > CurlReceiver.maxHeadBytes { precondition(receiver.failure != nil, "head over its bound accepted") }
        if receiver.failure != nil { break }
    }
    // The redirect rule: a Location from the input, against a fixed origin.
    let base = URL(string: "http://feed.example:8080/posts")!
    let location = String(decoding: bytes.prefix(512), as: UTF8.self)
    let target = URL(string: location, relativeTo: base)?.absoluteURL
    if let origin = Origin(base), origin.refusal(location: location, base: base, next: target) == nil {
        precondition(Origin(target) == origin, "followed a redirect to \(String(describing: target))")
    }
    return 0
}
