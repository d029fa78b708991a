import Foundation
import Observing
import TestFixtures
import TidingsStore
import XCTest
@testable import TidingsAPI

/// The upstream's validators travel with the stored posts document (`fetchedWith`), so whichever
/// instance takes the document answers its loader with them and asks the upstream conditionally
/// next (issue #34). The end-to-end proof on two instances is `PostsValidatorsAdoptionTests`.
private typealias JSON = TestFixtures.JSONValue

@MainActor
final class PostsValidatorsTests: XCTestCase {
    private static let source = "http://127.0.0.1:9/feed"
    private static let validators = Validators(etag: "\"v1\"", lastModified: "Fri, 27 Nov 2026 10:00:00 GMT")

    private static func loaded() throws -> LoadState<FetchedPosts> {
        let posts = try Post.decodeFeed(Data(#"[{"id":1,"title":"t \"fetchedWith\":","body":"b"}]"#.utf8))
        return .loaded(Loaded(value: FetchedPosts(posts), fetchedAt: Date(timeIntervalSince1970: 1_790_000_000)))
    }

    private static func body(_ state: LoadState<FetchedPosts>, _ validators: Validators?) -> String {
        PostsStateBody(state, source: source, timeout: .seconds(1), validators: validators).json
    }

    func test_a_document_with_posts_carries_their_validators_and_gives_them_back() async throws {
        let document = Self.body(try Self.loaded(), Self.validators)
        let json = try XCTUnwrap(JSON.parse(document.utf8))
        XCTAssertEqual(json["fetchedWith"], ["etag": "\"v1\"", "lastModified": "Fri, 27 Nov 2026 10:00:00 GMT"])
        XCTAssertEqual(json["state"], "loaded")
        XCTAssertEqual(json["posts"]?[0]?["title"], "t \"fetchedWith\":")
        XCTAssertEqual(StoredPostsPeek.validators(document), Self.validators)
        XCTAssertEqual(StoredPostsPeek.fetchedAtText(document), json["fetchedAt"]?.stringValue)
        // What the loader of an instance that takes the document receives: the posts and the validators.
        let stored = try XCTUnwrap(StoredPostsDocument(StoredPosts(document: document, revision: 7)))
        let answer = stored.answer
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(Validators(answer), Self.validators)
        XCTAssertEqual(JSON.parse(answer.body), json["posts"])
        // The answer marked `loading` over it keeps them.
        let marked = try XCTUnwrap(ServedPosts.markedLoading(Array(document.utf8)))
        XCTAssertEqual(JSON.parse(marked)?["fetchedWith"], json["fetchedWith"])
    }

    func test_a_document_without_validators_reads_as_before() async throws {
        // Stored before validators were kept (or from an upstream that sends none).
        let old = #"{"error":null,"fetchedAt":"2026-11-26T10:00:00.000Z","posts":[{"body":"b","id":1,"title":"t"}],"#
            + #""source":"\#(Self.source)","state":"loaded"}"#
        XCTAssertNil(StoredPostsPeek.validators(old))
        let stored = try XCTUnwrap(StoredPostsDocument(StoredPosts(document: old, revision: 3)))
        XCTAssertTrue(stored.answer.headers.isEmpty, "\(stored.answer.headers)")
        XCTAssertEqual(stored.fetchedAt, StoredPostsPeek.fetchedAt(old))
        XCTAssertEqual(Self.body(try Self.loaded(), nil), Self.body(try Self.loaded(), Validators()),
                       "no validators, no member")
        XCTAssertNil(JSON.parse(Self.body(try Self.loaded(), nil).utf8)?["fetchedWith"])
    }

    func test_validators_are_kept_only_with_posts_and_only_when_short() async throws {
        XCTAssertNil(JSON.parse(Self.body(.idle, Self.validators).utf8)?["fetchedWith"], "no posts, nothing fetched")
        let long = String(repeating: "x", count: PostsStateBody.maxValidatorBytes + 1)
        let document = Self.body(try Self.loaded(), Validators(etag: "\"\(long)\"", lastModified: "Fri, 27 Nov 2026 10:00:00 GMT"))
        XCTAssertEqual(StoredPostsPeek.validators(document), Validators(lastModified: "Fri, 27 Nov 2026 10:00:00 GMT"))
        XCTAssertNil(JSON.parse(Self.body(try Self.loaded(), Validators(etag: long)).utf8)?["fetchedWith"])
    }
}
