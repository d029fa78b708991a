import Foundation
import Observing
import TidingsStore

/// Applies what another server instance committed to the shared SQLite file, in revision
/// order: each change is recorded in the journal under the revision it took there (so resumes
/// and `Tidings-Revision` stay truthful), then announced on the same subjects as local writes —
/// preferences through the container's store (`externalChanges`), things through the thing
/// store. Posts announcements of other instances only advance the revision: each instance
/// fetches its own feed. Confined to the main actor.
@MainActor
final class ExternalChangeApplier {
    private let state: TidingsState
    private let sharedStore: SharedStoreKeyValueStore

    init(state: TidingsState, sharedStore: SharedStoreKeyValueStore) {
        self.state = state
        self.sharedStore = sharedStore
    }

    func apply(_ change: ExternalChange) {
        switch change {
        case let .changes(changes):
            for change in changes where change.revision > state.revision {
                apply(change.operation, revision: change.revision)
            }
        case let .reload(snapshot):
            reload(snapshot)
        }
    }

    private func apply(_ operation: StoreOperation, revision: UInt64) {
        switch operation {
        case let .setPreference(key, json):
            guard let declaration = state.preferences.declaration(forKey: key),
                  let raw = try? JSONDecoder().decode(PreferenceValue.self, from: Data(json.utf8)),
                  let value = try? declaration.check(raw).get() else {
                return state.advance(to: revision)
            }
            announcePreference(key, value: value, stored: value, revision: revision)
        case let .resetPreference(key):
            guard let declaration = state.preferences.declaration(forKey: key) else { return state.advance(to: revision) }
            announcePreference(key, value: declaration.defaultValue, stored: nil, revision: revision)
        case let .addThing(thing):
            guard !state.things.contains(thing) else { return state.advance(to: revision) }
            state.recordThings(state.things.things + [thing], revision: revision, op: "add", thing: thing)
            state.things.apply(.add(thing))
        case let .removeThing(thing):
            guard state.things.contains(thing) else { return state.advance(to: revision) }
            state.recordThings(state.things.things.filter { $0 != thing }, revision: revision, op: "remove", thing: thing)
            state.things.apply(.remove(thing))
        case let .replaceThings(list):
            guard list != state.things.things, Set(list).count == list.count else { return state.advance(to: revision) }
            state.recordThings(list, revision: revision, op: "replace", thing: nil)
            state.things.apply(.replaceAll(list))
        case .announce:
            state.advance(to: revision)
        }
    }

    private func announcePreference(_ key: String, value: PreferenceValue, stored: PreferenceValue?, revision: UInt64) {
        guard state.preferences.value(forKey: key) != value else { return state.advance(to: revision) }
        state.recordPreference(key, value: value, revision: revision)
        sharedStore.receiveExternal([key: stored])
    }

    /// The change log was pruned past us: bring everything to the snapshot, announcing each
    /// difference under the revision that made it.
    private func reload(_ snapshot: StoreSnapshot) {
        var pending: [(revision: UInt64, operation: StoreOperation)] = []
        for declaration in state.preferences.declarations {
            guard let record = snapshot.preferences[declaration.key], record.revision > state.revision else { continue }
            pending.append((record.revision, record.json.map { .setPreference(key: declaration.key, json: $0) }
                ?? .resetPreference(key: declaration.key)))
        }
        if snapshot.thingsRevision > state.revision {
            pending.append((snapshot.thingsRevision, .replaceThings(snapshot.things)))
        }
        for (revision, operation) in pending.sorted(by: { $0.revision < $1.revision }) {
            apply(operation, revision: revision)
        }
        state.advance(to: snapshot.revision)
    }
}
