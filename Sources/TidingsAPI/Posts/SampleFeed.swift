/// The feed Tidings ships in its binary and serves at `GET /sample/posts`.
///
/// Without `--feed-url` the server loads its posts from this endpoint over HTTP, exactly as it
/// would from any upstream, so `/posts` works on a machine with no network and the whole
/// loader path (request, status, body limit, decoding, conditional requests) is exercised.
enum SampleFeed {
    /// A strong validator for the fixed body, so conditional requests get `304 Not Modified`.
    static let etag = EntityTag("sample-feed-v1")
    /// Fixed when the posts were written (they never change at run time), so restarts and
    /// `If-Modified-Since` agree.
    static let lastModified = "Sun, 01 Nov 2026 00:00:00 GMT"
    /// The body as served, encoded once.
    static let body: [UInt8] = Array(json.utf8)

    static let json: String = #"""
    [
      {"id": 1, "userId": 1, "title": "Settings that announce themselves",
       "body": "Every preference is declared once, with its key, type and default. Change one and only the observers of that key hear about it."},
      {"id": 2, "userId": 1, "title": "One source of truth",
       "body": "The dashboard never guesses a new value: it sends the change and waits for the event stream to tell it what the server now holds."},
      {"id": 3, "userId": 2, "title": "Remote data that loads itself once",
       "body": "The first reader starts the load. Everyone who arrives while it runs shares the same request and the same result."},
      {"id": 4, "userId": 2, "title": "Keep the last good posts",
       "body": "When the upstream fails, the failure is reported with its reason and the previous posts keep being served."},
      {"id": 5, "userId": 3, "title": "TIL: YOLO, BTW, IMHO",
       "body": "The acronym list normalises what you type: trimmed, upper-cased without regard to locale, and never twice."},
      {"id": 6, "userId": 3, "title": "Resume without a gap",
       "body": "Every change carries a revision. Reconnect with Last-Event-ID and you get exactly the events you missed, then live ones."},
      {"id": 7, "userId": 4, "title": "Slow readers do not slow anyone else",
       "body": "A stream that stops reading is cut off at a bound and may resume later; every other subscriber keeps its pace."},
      {"id": 8, "userId": 4, "title": "Durable before acknowledged",
       "body": "A write is answered only after it is committed to the embedded store. Restart the server and every value is still there."}
    ]
    """#
}
