import EventHTTP
import Foundation
import Observing

/// One post of the feed: `{"id": int or string, "title": string, "body": string, "userId"?: int}`
/// plus whatever else the upstream sent, which is kept and served as it came.
struct Post: Sendable, Encodable {
    /// A post's id: the upstream may use integers or strings.
    enum ID: Sendable, Hashable {
        case integer(Int64)
        case string(String)

        /// The form `GET /posts/{id}` matches: `7` for 7, `abc` for "abc".
        var pathForm: String {
            switch self {
            case let .integer(value): String(value)
            case let .string(value): value
            }
        }
    }

    let id: ID
    let title: String
    let body: String
    let userId: Int64?
    /// The whole object as the upstream sent it (what clients get).
    let object: [String: JSONValue]

    func encode(to encoder: any Encoder) throws {
        try object.encode(to: encoder)
    }
}

/// What the posts loader holds: the posts, and their JSON array encoded once, off the loop,
/// where they were decoded (an 8 MiB feed takes a while to encode; the loop only splices it
/// into the `GET /posts` object).
struct FetchedPosts: Sendable {
    let posts: [Post]
    /// `posts` as one line of JSON (the shared encoder's sorted keys).
    let json: String

    init(_ posts: [Post]) {
        self.posts = posts
        json = EventFrame.json(posts)
    }

    /// Whether `other` holds the same posts: their canonical JSON compared byte for byte (one
    /// `memcmp`; `String ==` compares canonically, scalar by scalar, slow for megabytes).
    func hasSameJSON(as other: FetchedPosts) -> Bool {
        var mine = json, theirs = other.json
        return mine.withUTF8 { a in
            theirs.withUTF8 { b in a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) }
        }
    }
}

/// Why an upstream body is not a feed of posts; the description is the `error.message` clients
/// see, so it names the element and the field.
enum PostsDecodingError: Error, Sendable, CustomStringConvertible {
    case notJSON
    case notAnArray(found: String)
    case badElement(index: Int, problem: String)

    var description: String {
        switch self {
        case .notJSON:
            "The upstream feed's answer is not JSON."
        case let .notAnArray(found):
            "The upstream feed's answer is not a JSON array of posts: it is \(found)."
        case let .badElement(index, problem):
            "The upstream feed's answer is not a JSON array of posts: element [\(index)] \(problem)."
        }
    }
}

extension Post {
    private static let decoder = JSONCoding.decoder

    /// Decodes a feed body: a JSON array of post objects. Runs off the loop (in the loader's
    /// fetch task), so an 8 MiB feed never stalls it.
    static func decodeFeed(_ data: Data) throws(PostsDecodingError) -> [Post] {
        let document: JSONValue
        do { document = try decoder.decode(JSONValue.self, from: data) } catch { throw .notJSON }
        guard case let .array(elements) = document else { throw .notAnArray(found: document.kindName) }
        var posts: [Post] = []
        posts.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do { posts.append(try Post(element)) } catch { throw .badElement(index: index, problem: error.problem) }
        }
        return posts
    }

    private struct Problem: Error {
        let problem: String
    }

    private init(_ element: JSONValue) throws(Problem) {
        guard case let .object(object) = element else { throw Problem(problem: "is \(element.kindName), not an object") }
        func field(_ name: String) throws(Problem) -> JSONValue {
            guard let value = object[name] else { throw Problem(problem: "has no \"\(name)\"") }
            return value
        }
        func string(_ name: String) throws(Problem) -> String {
            let value = try field(name)
            guard case let .string(text) = value else {
                throw Problem(problem: "has \"\(name)\" \(value.kindName), not a string")
            }
            return text
        }
        switch try field("id") {
        case let .integer(value): id = .integer(value)
        case let .string(value): id = .string(value)
        case let other: throw Problem(problem: "has \"id\" \(other.kindName), not an integer or a string")
        }
        title = try string("title")
        body = try string("body")
        switch object["userId"] {
        case nil: userId = nil
        case let .integer(value)?: userId = value
        case let other?: throw Problem(problem: "has \"userId\" \(other.kindName), not an integer")
        }
        self.object = object
    }
}
