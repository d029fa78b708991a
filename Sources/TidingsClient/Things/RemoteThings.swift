import Foundation
public import OpenCombine

/// A `things` event, or the answer of `GET /things`.
struct ThingsSnapshot: Decodable, Sendable {
    struct Change: Decodable, Sendable {
        let op: String
        let thing: String?
    }

    let things: [String]
    let revision: UInt64
    let change: Change?
}

/// The server's thing list, observable: `things` is `@Published` (current value on
/// subscription, then each change, wherever it was made). Writes go to the server, which
/// normalises and checks them; its refusals come back as ``TidingsClientError``
/// (``TidingsClientError/alreadyExists(_:)`` for 409, ``TidingsClientError/refused(_:)`` for 422,
/// ``TidingsClientError/notFound(_:)`` for 404). A write's result is in `things` when it returns.
@MainActor
public final class RemoteThings: @preconcurrency ObservableObject {
    @Published public private(set) var things: [String] = []
    /// The revision `things` reflects (nil until the stream or a read told it).
    @Published public private(set) var revision: UInt64?
    public let objectWillChange = ObservableObjectPublisher()

    private let transport: Transport

    init(transport: Transport) {
        self.transport = transport
    }

    /// `POST /things`: returns the thing as the server stored it (normalised).
    @discardableResult
    public func add(_ thing: String) async throws(TidingsClientError) -> String {
        struct Answer: Decodable { let thing: String; let revision: UInt64 }
        let answer = try await transport.expectSuccess("POST", ["things"], json: try encodeJSON(["thing": thing])).decode(Answer.self)
        try await catchUp(to: answer.revision)
        return answer.thing
    }

    /// `DELETE /things/{thing}` (the server normalises the name before looking it up).
    public func remove(_ thing: String) async throws(TidingsClientError) {
        let response = try await transport.expectSuccess("DELETE", ["things", thing])
        if let revision = response.revision { try await catchUp(to: revision) }
    }

    /// `PUT /things`: the whole list, atomically (nothing changes when one entry is refused).
    public func replace(with things: [String]) async throws(TidingsClientError) {
        let answer = try await transport.expectSuccess("PUT", ["things"], json: try encodeJSON(["things": things]))
            .decode(ThingsSnapshot.self)
        receive(answer, afterReset: false)
    }

    /// `GET /things`, applied like an announced change.
    public func fetch() async throws(TidingsClientError) {
        receive(try await transport.expectSuccess("GET", ["things"]).decode(ThingsSnapshot.self), afterReset: false)
    }

    /// After a write the server answered for with `revision`: unless the stream already
    /// brought it, read the list so that the caller sees its own write.
    private func catchUp(to revision: UInt64) async throws(TidingsClientError) {
        if let known = self.revision, known >= revision { return }
        try await fetch()
    }

    /// Applied when newer (or, after a `reset`, when different).
    func receive(_ snapshot: ThingsSnapshot, afterReset: Bool) {
        if let revision {
            if afterReset ? (revision == snapshot.revision && things == snapshot.things) : revision >= snapshot.revision { return }
        }
        objectWillChange.send()
        things = snapshot.things
        revision = snapshot.revision
    }
}
