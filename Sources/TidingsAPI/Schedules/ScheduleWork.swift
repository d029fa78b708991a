import EventHTTP
import HTTPTypes
import Foundation
import Observing
import TidingsModel
import TidingsStore

/// What a schedule does when it falls due: preferences to set and/or the list to replace (as
/// `POST /apply` does, nothing pruned), or a rollback of the whole configuration (preferences
/// and list) to revision R; and the reason its write records. Kept in the store as JSON text,
/// read back and checked again when it is applied.
struct ScheduleWork: Sendable {
    var preferences: PreferencePatch?
    var things: [String]?
    var rollback: UInt64?
    var reason: String?

    /// The body of `POST /schedules`: the work plus `at`; any other member is refused.
    struct Body: Decodable {
        var at: String?
        var preferences: PreferencePatch?
        var things: [String]?
        var rollback: UInt64?
        var reason: String?
        var unknown: String?
        /// The first member other than `rollback` that is `null` (refused with its name: the
        /// contract's schema allows a null `rollback` only).
        var null: String?

        private struct Member: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        static let members: Set<String> = ["at", "preferences", "things", "rollback", "reason"]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Member.self)
            unknown = container.allKeys.map(\.stringValue).sorted().first { !Self.members.contains($0) }
            null = ["at", "preferences", "things", "reason"].first { name in
                let key = Member(stringValue: name)
                return container.contains(key) && (try? container.decodeNil(forKey: key)) == true
            }
            at = try container.decodeIfPresent(String.self, forKey: Member(stringValue: "at"))
            preferences = try container.decodeIfPresent(PreferencePatch.self, forKey: Member(stringValue: "preferences"))
            things = try container.decodeIfPresent([String].self, forKey: Member(stringValue: "things"))
            rollback = try container.decodeIfPresent(UInt64.self, forKey: Member(stringValue: "rollback"))
            reason = try container.decodeIfPresent(String.self, forKey: Member(stringValue: "reason"))
        }
    }

    /// The work as stored (JSON; preference values as sent, the list normalised).
    var json: String {
        var members: [String] = []
        if let preferences {
            let entries = preferences.entries.sorted { $0.key < $1.key }.map { key, input -> String in
                let value: String
                switch input {
                case .reset, .unsupported: value = "null"
                case let .value(v): value = EventFrame.json(v)
                }
                return EventFrame.json(key) + ":" + value
            }
            members.append(#""preferences":{"# + entries.joined(separator: ",") + "}")
        }
        if let things { members.append(#""things":"# + EventFrame.json(things)) }
        if let rollback { members.append(#""rollback":"# + String(rollback)) }
        if let reason { members.append(#""reason":"# + EventFrame.json(reason)) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Reads what ``json`` wrote (nil: unreadable, which a schedule reports as its failure).
    static func stored(_ text: String) -> ScheduleWork? {
        guard let body = try? JSONCoding.decoder.decode(Body.self, from: Data(text.utf8)) else { return nil }
        return ScheduleWork(preferences: body.preferences, things: body.things, rollback: body.rollback, reason: body.reason)
    }
}

/// The operations a schedule's work makes against the state now: the same checks as when it
/// was made, so a value a later declaration no longer allows fails the schedule, not the store.
@MainActor
enum SchedulePlanner {
    /// The operations (or a problem whose detail the schedule's failure records).
    static func operations(_ work: ScheduleWork, state: TidingsState, store: any ChangeStore) async -> Result<[RollbackOperation], ProblemDetails> {
        if let revision = work.rollback {
            let past: HistoricalState
            do {
                past = try await store.state(asOf: .revision(revision), environment: state.environment)
            } catch {
                return .failure(ScheduleProblems.rollback(error, revision: revision))
            }
            var operations: [RollbackOperation] = state.preferences.declarations.map { declaration in
                let value = past.preferences[declaration.key]?.json.flatMap { TidingsState.preferenceValue(json: $0, declaration: declaration) }
                let operation = WriteOperation.setPreference(key: declaration.key, json: value.map { EventFrame.json($0) },
                                                             defaultJSON: EventFrame.json(declaration.defaultValue))
                return (operation, value ?? declaration.defaultValue)
            }
            operations.append((.replaceThings(past.things), nil))
            return .success(operations)
        }
        var document = ApplyDocument(preferences: work.preferences ?? PreferencePatch([:]))
        if let raws = work.things {
            do throws(ThingError) {
                document.things = try ThingRules.validateList(raws, textCase: state.textCase)
            } catch {
                document.thingsProblem = error
            }
        }
        do throws(ProblemDetails) {
            return .success(try ApplyPlan(document, prune: false, state: state).operations)
        } catch {
            return .failure(error)
        }
    }
}

enum ScheduleProblems {
    /// A rollback's revision that cannot be read.
    static func rollback(_ error: any Error, revision: UInt64) -> ProblemDetails {
        switch error as? StoreError {
        case let .beyondHistory(oldest)?:
            return ProblemDetails(status: .gone, detail: "Revision \(revision) is older than the retained history (the oldest is \(oldest)).")
        case let .futureRevision(current)?:
            return Problems.invalid("Revision \(revision) is newer than the current revision \(current).",
                                    errors: [.init(key: "rollback", detail: "newer than the current revision \(current)")])
        default:
            return ProblemDetails(status: .serviceUnavailable, detail: "The history could not be read right now; try again.",
                                  headers: [.retryAfter: "1"])
        }
    }

    /// One line for a failed schedule's `detail`: the problem, and each key it names whose
    /// reason the problem's text does not already give (a 422's text names every bad key:
    /// repeating them read "'speed': must be at most 10; nothing was changed.; speed: ...").
    static func detail(_ problem: ProblemDetails) -> String {
        let keys = (problem.errors ?? []).filter { !problem.detail.contains($0.detail) }.map { "\($0.key): \($0.detail)" }
        return ([problem.detail] + keys).joined(separator: "; ")
    }
}
