// libFuzzer target over stream query and resume-id parsing: query decoding and its
// well-formedness check, `keys`/`topics` lists, and `Last-Event-ID` / `?lastEventId=`
// (StreamHub.resumePoint, compiled from Sources/TidingsAPI/Streams/ResumePoint.swift).
import Foundation
import HTTPTypes
@testable import EventHTTP

/// Stand-ins for the TidingsAPI names ResumePoint.swift uses.
final class StreamHub {}
extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
enum Problems {
    static func badQuery(_ detail: String) -> ProblemDetails { ProblemDetails(status: .badRequest, detail: detail) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let query = String(decoding: bytes[..<split], as: UTF8.self)
    let header = split < bytes.count ? String(decoding: bytes[(split + 1)...], as: UTF8.self) : nil
    var headers = HTTPFields()
    if let header, !header.isEmpty {
        headers.append(HTTPField(name: .lastEventID, value: header))   // invalid bytes become spaces, as from evhttp
    }
    let request = Request(method: .get, target: "/events?" + query, headers: headers, body: [], receivedAt: 0)

    // A well-formed query decodes every component; the routes never see a raw escape then.
    if request.hasWellFormedQuery, let raw = request.rawQuery {
        let components = raw.split(separator: "&").count
        precondition(request.queryItems.count == components)
    }
    _ = request.query("keys")?.split(separator: ",")
    _ = request.query("topics")?.split(separator: ",")
    do {
        switch try StreamHub.resumePoint(request) {
        case .after(let revision):
            // The header as the request holds it (HTTPField turns bytes a field value cannot
            // hold into spaces, as it does for what evhttp parsed).
            let raw = (request.headers[.lastEventID] ?? request.query("lastEventId") ?? "").trimmingCharacters(in: .whitespaces)
            precondition(UInt64(raw) == revision, "resume point \(revision) from '\(raw)'")
        case .beyondRange, .none:
            break
        }
    } catch {
        precondition(error.status == .badRequest)
    }
    return 0
}
