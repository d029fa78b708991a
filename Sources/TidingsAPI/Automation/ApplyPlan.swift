import EventHTTP
import HTTPTypes
import Observing
import TidingsModel
import TidingsStore

/// What applying a document (or a schedule) would do to the state in memory: the write's
/// operations, each with the checked value it sets, and the differences a dry run shows. One
/// write computed from a diff, like a rollback: the store skips what is already there inside
/// the transaction, so a concurrent write cannot make it half-apply.
@MainActor
struct ApplyPlan {
    /// The operations of the one write (every key named, the list if present).
    let operations: [RollbackOperation]
    /// Keys whose value would change: key, value now, value after.
    let changes: [(key: String, before: PreferenceValue, after: PreferenceValue)]
    /// The list now and after, when it would change.
    let things: (before: [String], after: [String])?

    /// Checks `document` against the declarations: every bad key is named (422), nothing is
    /// planned unless all are good. `prune`: keys not named go back to their defaults.
    init(_ document: ApplyDocument, prune: Bool, state: TidingsState) throws(ProblemDetails) {
        var entries = document.preferences.entries
        if prune {
            for declaration in state.preferences.declarations where entries[declaration.key] == nil {
                entries[declaration.key] = .reset
            }
        }
        var errors: [ProblemDetails.FieldError] = []
        var validated: [ValidatedChanges.Entry] = []
        do throws(PreferenceValidationError) {
            validated = try state.preferences.validate(PreferencePatch(entries)).entries
        } catch {
            errors = error.issues.map { .init(key: $0.key, detail: $0.message) }
        }
        if let problem = document.thingsProblem {
            errors.append(.init(key: "things", detail: problem.description))
        } else if let reserved = document.things?.first(where: WritePipeline.reservedThings.contains) {
            errors.append(.init(key: "things", detail: "\"\(reserved)\" is reserved: /things/\(reserved) is another resource"))
        }
        if !errors.isEmpty {
            let detail = errors.count == 1
                ? "'\(errors[0].key)': \(errors[0].detail); nothing was changed."
                : "\(errors.count) keys are invalid; nothing was changed."
            throw Problems.invalid(detail, errors: errors)
        }
        var operations: [RollbackOperation] = []
        var changes: [(key: String, before: PreferenceValue, after: PreferenceValue)] = []
        for entry in validated {
            let declaration = state.preferences.declaration(forKey: entry.key)!
            let operation = WriteOperation.setPreference(key: entry.key, json: entry.storedValue.map { EventFrame.json($0) },
                                                         defaultJSON: EventFrame.json(declaration.defaultValue))
            operations.append((operation, entry.newValue))
            let current = state.preferences.value(forKey: entry.key) ?? declaration.defaultValue
            if current != entry.newValue { changes.append((entry.key, current, entry.newValue)) }
        }
        var things: (before: [String], after: [String])?
        if let list = document.things {
            operations.append((.replaceThings(list), nil))
            if list != state.things.things { things = (state.things.things, list) }
        }
        self.operations = operations
        self.changes = changes
        self.things = things
    }

    /// `{"changes": [{"key", "before", "after"}], "things"?: {"before", "after"}}` (a dry run).
    var dryRunJSON: [UInt8] {
        var text = #"{"changes":["#
        text += changes.map { change in
            #"{"key":"# + EventFrame.json(change.key) + #","before":"# + EventFrame.json(change.before)
                + #","after":"# + EventFrame.json(change.after) + "}"
        }.joined(separator: ",")
        text += "]"
        if let things {
            text += #","things":{"before":"# + EventFrame.json(things.before) + #","after":"# + EventFrame.json(things.after) + "}"
        }
        return Array((text + "}").utf8)
    }
}
