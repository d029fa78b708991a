/// A committed change together with what it means to its reader, worked out once: for the
/// writer's own changes the meaning it gave the operation (its value, already checked), so a
/// write's JSON is never decoded back; for a change another writer made, what the reader made
/// of it where it came in.
///
/// ```swift
/// // The writer checked its value before encoding it; the change comes back with it attached.
/// let changes = try await store.commit(write, meanings: [checkedValue], interpret: decodeAndCheck)
/// ```
public struct TypedChange<Meaning: Sendable>: Sendable {
    public let change: Change
    public let meaning: Meaning

    public init(_ change: Change, meaning: Meaning) {
        self.change = change
        self.meaning = meaning
    }

    public var revision: UInt64 { change.revision }
}

extension ChangeStore {
    /// Commits `write` (see ``commit(_:)``) whose operations carry `meanings` (one each, in
    /// order) and returns each change it made with the meaning of the operation that made it.
    ///
    /// A store makes at most one change per operation, in operation order, recording what the
    /// operation set; a change no remaining operation accounts for (it cannot happen with a
    /// sound store, but the database is outside the process) gets `interpret(change)`: the
    /// reader's way with any other writer's change. Both run on the caller's actor.
    public func commit<Meaning: Sendable>(
        _ write: StoreWrite, meanings: [Meaning], isolation: isolated (any Actor)? = #isolation,
        interpret: (Change) -> Meaning
    ) async throws -> [TypedChange<Meaning>] {
        let changes = try await commit(write)
        var next = 0
        return changes.map { change in
            var index = next
            while index < write.operations.count, !write.operations[index].made(change.kind) { index += 1 }
            guard index < write.operations.count, index < meanings.count else { return TypedChange(change, meaning: interpret(change)) }
            next = index + 1
            return TypedChange(change, meaning: meanings[index])
        }
    }
}

extension WriteOperation {
    /// Whether a change of `kind` is what this operation records when it changes something.
    /// Preference values are compared as bytes (as the stores compare them); a write holds at
    /// most one list replacement and one posts document, so those match by kind.
    func made(_ kind: Change.Kind) -> Bool {
        switch (self, kind) {
        case let (.setPreference(key, json, _), .preference(changedKey, changedJSON)):
            guard key.hasSameUTF8(as: changedKey) else { return false }
            switch (json, changedJSON) {
            case (nil, nil): return true
            case let (json?, changedJSON?): return json.hasSameUTF8(as: changedJSON)
            default: return false
            }
        case let (.addThing(thing), .things(.add, changed?, _)), let (.removeThing(thing), .things(.remove, changed?, _)):
            return thing.hasSameUTF8(as: changed)
        case (.replaceThings, .things(.replace, _, _)), (.setPosts, .posts),
             (.createEnvironment, .environment(.created, _)), (.deleteEnvironment, .environment(.deleted, _)):
            return true
        default:
            return false
        }
    }
}
