import Foundation
import Observing
@testable import TidingsAPI
import XCTest

/// Every libcurl option the upstream client sets is checked (``CurlHandle``): an option libcurl
/// refuses ends the request with a failure naming it, before any exchange (before: 15 option
/// results were ignored, so a refused option — the protocol restriction among them — went
/// unnoticed and the request ran without it).
final class CurlOptionTests: XCTestCase {
    /// A negative body limit is one value libcurl refuses (`CURLOPT_MAXFILESIZE`); nothing
    /// listens on the URL's port, so only the refusal can answer before a connection error.
    func testARefusedOptionFailsTheRequestNamingIt() async throws {
        let client = CurlHTTPClient()
        let request = HTTPClientRequest(url: URL(string: "http://127.0.0.1:9/posts")!, timeout: .seconds(2), maxBodyBytes: -1)
        do {
            _ = try await client.send(request)
            XCTFail("a request whose option libcurl refused was sent")
        } catch let error as HTTPClientError {
            XCTAssertEqual(error, .connectionFailed("libcurl refused CURLOPT_MAXFILESIZE: A libcurl function was given a bad argument"))
        }
    }
}
