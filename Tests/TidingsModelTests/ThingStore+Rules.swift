import Observing
import TidingsModel

/// The tests' checked edits of a ``ThingStore``: each one normalises and checks the input with
/// ``ThingRules`` under the store's current text case (its environment's ``TextCase``, read at
/// each operation), then applies it through the store's ``ThingStore/apply(_:revision:payload:)``
/// — the rules the server's write pipeline applies, without its queue and durable store. (No
/// product uses edits like these, so they live here, not in TidingsModel.)
///
/// ```swift
/// let store = ThingStore<Never>()
/// try store.add(" yolo ")   // "YOLO"
/// store.environment.textCase = .none
/// ```
extension ThingStore {
    /// The text case this store normalises with (from its environment).
    var textCase: TextCase { environment.textCase }

    /// The normalised form of `raw` under this store's current text case.
    func normalize(_ raw: String) -> String {
        ThingRules.normalize(raw, textCase: textCase)
    }

    /// Normalises, checks and appends `raw`; returns the stored thing.
    @discardableResult
    func add(_ raw: String) throws(ThingError) -> String {
        let thing = try ThingRules.validateAdd(raw, to: members, textCase: textCase)
        apply(.add(thing))
        return thing
    }

    /// Removes the thing `raw` normalises to; returns it.
    @discardableResult
    func remove(_ raw: String) throws(ThingError) -> String {
        let thing = normalize(raw)
        guard contains(thing) else { throw .notFound(thing) }
        apply(.remove(thing))
        return thing
    }

    /// Replaces the whole list, atomically: on any error nothing changes.
    @discardableResult
    func replaceAll(_ raws: [String]) throws(ThingError) -> [String] {
        let list = try ThingRules.validateList(raws, textCase: textCase)
        apply(.replaceAll(list))
        return list
    }
}
