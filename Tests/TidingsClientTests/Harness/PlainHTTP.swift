import Foundation
import TestFixtures
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests made the way curl would, without the client library: what "someone else" does.
enum PlainHTTP {
    struct Answer {
        let status: Int
        let body: String
        /// The body as JSON, compared by value (nil when it is not JSON).
        var json: JSONValue? { JSONValue.parse(Array(body.utf8)) }
    }

    static func send(_ method: String, _ url: URL, json: String? = nil, headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: 10)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return Answer(status: (response as! HTTPURLResponse).statusCode, body: String(decoding: data, as: UTF8.self))
    }

    static func put(_ server: URL, key: String, json: String) async throws -> Answer {
        try await send("PUT", server.appendingPathComponent("preferences/\(key)"), json: "{\"value\": \(json)}")
    }
}
