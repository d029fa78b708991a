import HTTPTypes
import EventHTTP
import Foundation
import Observing

/// `POST /posts/cancel` answer.
private struct CancelResult: Encodable {
    let cancelled: Bool
}

/// The Posts resource of openapi.yaml: the feed's state, single posts, refresh and cancel. Every
/// answer comes from memory; the only upstream work is the loader's, off the loop.
@MainActor
struct PostsRoutes {
    /// The longest `?wait=` accepted, in seconds.
    static let maxWait = 30

    let feed: PostsFeed

    func register(on router: any RouteRegistrar) {
        router.get("/posts") { request, responder in
            let wait = try Self.waitSeconds(request)
            feed.fetchIfNeeded()
            feed.answer(responder, within: Double(wait ?? 0))
        }
        router.get("/posts/{id}") { request, responder in
            // A lookup reads what is loaded; it never starts a load (openapi.yaml).
            let id = request.parameters["id"] ?? ""
            guard let post = feed.post(id: id) else {
                throw Problems.notFound(!feed.holdsPosts
                    ? "No posts are loaded yet (the feed is \(feed.phase.rawValue)), so there is no post '\(id)'."
                    : "There is no post with id '\(id)'.")
            }
            responder.send(.json(post))
        }
        router.post("/posts/refresh") { _, responder in
            feed.refresh()
            feed.answer(responder, status: .accepted)
        }
        router.post("/posts/cancel") { _, responder in
            responder.send(.json(CancelResult(cancelled: feed.cancel())))
        }
    }

    /// `?wait=N`: whole seconds from 0 to 30; absent → nil; anything else → 400.
    static func waitSeconds(_ request: Request) throws(ProblemDetails) -> Int? {
        guard let raw = request.query("wait") else { return nil }
        guard let seconds = Int(raw.trimmingCharacters(in: .whitespaces)), (0...maxWait).contains(seconds) else {
            throw Problems.badQuery("'wait' must be a whole number of seconds from 0 to \(maxWait), not '\(raw)'.")
        }
        return seconds
    }
}
