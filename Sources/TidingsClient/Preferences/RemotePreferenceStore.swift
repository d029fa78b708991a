import Foundation
public import Observing
public import OpenCombine

/// A ``KeyValueStore`` whose contents are a Tidings server's preferences: the `@CloudStorage`
/// idea over HTTP. Give it to a ``Preferences`` container (or a class of ``UserDefault``
/// properties) and the library's wrappers work unchanged over a live server:
///
/// - changes announced on the client's event stream (curl, the dashboard, other clients)
///   arrive through ``externalChanges``, so the container sends them on its per-key subjects;
/// - a write through a property or a ``PreferenceBinding`` is applied at once and sent as
///   `PUT /preferences/{key}` with `If-Match: "<the revision this client last saw>"` (a reset
///   as `DELETE`, several keys at once as `PATCH /preferences`). If the server refuses it
///   (412 someone else wrote first, 422 a rule the declaration lacks) the value returns to the
///   server's and the refusal is sent on ``writeFailures``.
///
/// ``set(_:forKey:)`` is the same write for callers that want to `await` it and catch the
/// typed error.
@MainActor
public final class RemotePreferenceStore: KeyValueStore {
    private let transport: Transport
    private var known: [String: PreferenceRecord] = [:]
    private let external = PassthroughSubject<[String: PreferenceValue?], Never>()
    private let changeSubject = PassthroughSubject<PreferenceRecord, Never>()
    private let failureSubject = PassthroughSubject<PreferenceWriteFailure, Never>()
    private var inFlight = 0
    /// The last container write of each key still on its way; the next write of the key waits
    /// for it. It returns the revisions its keys got (empty when refused).
    private var pending: [String: Task<[String: UInt64], Never>] = [:]

    init(transport: Transport) {
        self.transport = transport
    }

    // MARK: KeyValueStore

    /// The server's value of `key` as last announced (nil until the stream or a read told it).
    public func value(forKey key: String) -> PreferenceValue? { known[key]?.value }

    /// Sends the changes to the server without waiting (the container applies them at once).
    ///
    /// One key: `PUT` (or `DELETE` for a reset) with `If-Match` = the revision this client
    /// last saw for it, or, while an earlier write of the key is on its way, the revision that
    /// write gets (so quick successive writes, a slider, never conflict with each other).
    /// Several keys: one atomic `PATCH` (the server takes no `If-Match` for it), then each
    /// key's record is read to learn its revision.
    public func write(_ changes: [String: PreferenceValue?]) throws {
        guard !changes.isEmpty else { return }
        let keys = changes.keys.sorted()
        let seen = keys.reduce(into: [String: UInt64]()) { $0[$1] = known[$1]?.revision }
        let earlier = keys.compactMap { key in pending[key].map { (key, $0) } }
        inFlight += 1
        let task = Task { () -> [String: UInt64] in
            var revisions = seen
            for (key, write) in earlier {
                // Our own earlier write of this key: build on its result, or, if refused, on
                // what the server has now.
                revisions[key] = await write.value[key] ?? known[key]?.revision
            }
            defer { inFlight -= 1 }
            do throws(TidingsClientError) {
                if keys.count == 1, let value = changes[keys[0]] {
                    let record = try await send(value, forKey: keys[0], ifRevision: revisions[keys[0]] ?? nil)
                    return [record.key: record.revision]
                }
                try await patch(changes)
                var result: [String: UInt64] = [:]
                for key in keys { result[key] = (try? await fetch(key))?.revision }
                return result
            } catch {
                await recover(from: error, changes: changes)
                return [:]
            }
        }
        for key in keys { pending[key] = task }
        Task {
            _ = await task.value
            for key in keys where pending[key] == task { pending[key] = nil }
        }
    }

    public var externalChanges: AnyPublisher<[String: PreferenceValue?], Never> { external.eraseToAnyPublisher() }

    // MARK: Observing the server

    /// Each preference change the server announced, once per revision, in order (the current
    /// values first after connecting or after a `reset`).
    public var changes: AnyPublisher<PreferenceRecord, Never> { changeSubject.eraseToAnyPublisher() }

    /// Writes made through the container that the server refused.
    public var writeFailures: AnyPublisher<PreferenceWriteFailure, Never> { failureSubject.eraseToAnyPublisher() }

    /// The revision of `key`'s value as last announced.
    public func revision(forKey key: String) -> UInt64? { known[key]?.revision }

    /// Every key's last announced state.
    public var current: [String: PreferenceRecord] { known }

    /// Whether container writes are still on their way to the server.
    public var hasWritesInFlight: Bool { inFlight > 0 }

    // MARK: Writing and reading, awaited

    /// `PUT /preferences/{key}` with `If-Match` = `ifRevision` (none: unconditional) and
    /// applies the server's answer. Throws ``TidingsClientError/conflict(_:)`` (412),
    /// ``TidingsClientError/refused(_:)`` (422), ``TidingsClientError/notFound(_:)`` (unknown key).
    @discardableResult
    public func set(_ value: PreferenceValue, forKey key: String, ifRevision: UInt64? = nil) async throws(TidingsClientError) -> PreferenceRecord {
        try await send(value, forKey: key, ifRevision: ifRevision)
    }

    /// `DELETE /preferences/{key}`: back to the default.
    @discardableResult
    public func reset(_ key: String, ifRevision: UInt64? = nil) async throws(TidingsClientError) -> PreferenceRecord {
        try await send(nil, forKey: key, ifRevision: ifRevision)
    }

    /// `GET /preferences/{key}`, applied like an announced change.
    @discardableResult
    public func fetch(_ key: String) async throws(TidingsClientError) -> PreferenceRecord {
        let record = try await transport.expectSuccess("GET", ["preferences", key]).decode(PreferenceRecord.self)
        receive(record)
        return record
    }

    /// `GET /preferences`: every key's value.
    public func fetchAll() async throws(TidingsClientError) -> [String: PreferenceValue] {
        try await transport.expectSuccess("GET", ["preferences"]).decode([String: PreferenceValue].self)
    }

    @discardableResult
    private func send(_ value: PreferenceValue?, forKey key: String, ifRevision: UInt64?) async throws(TidingsClientError) -> PreferenceRecord {
        var headers: [String: String] = [:]
        if let ifRevision { headers["If-Match"] = "\"\(ifRevision)\"" }
        let response: TidingsResponse
        if let value {
            let body = try encodeJSON(["value": value])
            response = try await transport.expectSuccess("PUT", ["preferences", key], headers: headers, json: body)
        } else {
            response = try await transport.expectSuccess("DELETE", ["preferences", key], headers: headers)
        }
        let record = try response.decode(PreferenceRecord.self)
        receive(record)
        return record
    }

    private func patch(_ changes: [String: PreferenceValue?]) async throws(TidingsClientError) {
        // JSON merge patch: null resets a key. The server merges an object onto its value, so an
        // object is sent as the patch from the value this client last saw to the new one (the
        // members it drops as null): the key ends as the value written, as with PUT. The answer
        // has no revisions; the stream brings them.
        let body = try encodeJSON(changes.reduce(into: [String: MergePatchValue]()) { body, change in
            body[change.key] = change.value.map { MergePatchValue.patch(from: known[change.key]?.value, to: $0) } ?? .null
        })
        _ = try await transport.expectSuccess("PATCH", ["preferences"], json: body)
    }

    /// After a refused container write: learn the server's value (a 412 means it moved on),
    /// put it back into the container, then report the refusal.
    private func recover(from error: TidingsClientError, changes: [String: PreferenceValue?]) async {
        for key in changes.keys.sorted() {
            if case .conflict = error { _ = try? await fetch(key) }
            // The container still shows the refused value; the last server value replaces it
            // (nil, for a key the server never announced: the declared default).
            external.send([key: known[key]?.value])
        }
        for key in changes.keys.sorted() {
            failureSubject.send(PreferenceWriteFailure(key: key, attempted: changes[key] ?? nil, error: error))
        }
    }

    // MARK: From the stream

    /// A value the server announced: applied when newer than what this client knows, or, in
    /// the snapshot after a `reset`, when it differs (a server restarted on an empty store
    /// counts from 0 again, so older revisions are the truth then).
    func receive(_ change: PreferenceRecord, afterReset: Bool = false) {
        if let previous = known[change.key] {
            if afterReset ? previous == change : previous.revision >= change.revision { return }
        }
        known[change.key] = change
        changeSubject.send(change)
        external.send([change.key: change.value])
    }
}

/// JSON for a request body (encoding plain values does not fail; typed for the callers).
func encodeJSON(_ value: some Encodable) throws(TidingsClientError) -> Data {
    do { return try JSONEncoder().encode(value) } catch { throw .invalidResponse("could not encode \(value): \(error)") }
}

/// A merge-patch member: a value, null for "reset to the default" (a member's null: "remove
/// it"), or an object's members to merge.
enum MergePatchValue: Encodable, Equatable {
    case value(PreferenceValue)
    case null
    case members([String: MergePatchValue])

    /// What turns `old` into `new` under RFC 7396: for two objects, the members that differ
    /// (nested objects as patches again) and null for each member `new` drops; else `new`.
    static func patch(from old: PreferenceValue?, to new: PreferenceValue) -> MergePatchValue {
        guard case let .object(newObject) = new, case let .object(oldObject)? = old else { return .value(new) }
        var members: [String: MergePatchValue] = [:]
        for member in newObject.members where oldObject[member.name] != member.value {
            members[member.name] = patch(from: oldObject[member.name], to: member.value)
        }
        for member in oldObject.members where newObject[member.name] == nil { members[member.name] = .null }
        return .members(members)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .value(v): try container.encode(v)
        case .null: try container.encodeNil()
        case let .members(members): try container.encode(members)
        }
    }
}
