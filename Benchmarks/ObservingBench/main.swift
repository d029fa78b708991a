// ObservingBench: what one preference change costs, with many observers.
//
//   swift run -c release ObservingBench
//
// 1. One change announced to N observers of the changed key (cost grows with N: every
//    observer runs).
// 2. One change to a key nobody observes while N observers watch other keys (goal: flat —
//    the per-key subjects mean other keys' observers are never visited).
import Foundation
import Observing
import OpenCombine

@MainActor
func makePreferences(keys: Int) -> Preferences<Never> {
    let declarations = (0..<keys).map {
        PreferenceDeclaration(key: "k\($0)", type: .integer, defaultValue: .integer(0))
    }
    return try! Preferences<Never>(declarations: declarations)
}

/// Nanoseconds per change, best of several rounds (less noise from other jobs on the machine).
@MainActor
func measure(changes: Int, rounds: Int = 5, _ change: (Int) -> Void) -> Double {
    var best = Double.infinity
    var value = 0
    for _ in 0..<rounds {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<changes {
            value += 1
            change(value)
        }
        let elapsed = clock.now - start
        let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        best = min(best, ns / Double(changes))
    }
    return best
}

@MainActor
func observedKeyCost(observers: Int) -> Double {
    let prefs = makePreferences(keys: 2)
    var received = 0
    var cancellables: [AnyCancellable] = []
    for _ in 0..<observers {
        cancellables.append(prefs.publisher(forKey: "k0")!.sink { _ in received += 1 })
    }
    let changes = max(20, 2_000_000 / max(observers, 1))
    let ns = measure(changes: changes) { value in
        // The server's split: checked once, then received as the store's change.
        let validated = try! prefs.validate(PreferencePatch(values: ["k0": .integer(value)]))
        prefs.receive(validated.entries.map { PreferenceChange(key: $0.key, value: $0.newValue, revision: 0) })
    }
    precondition(received >= observers * changes, "observers must have run")
    withExtendedLifetime(cancellables) {}
    return ns
}

/// `observers` observers spread over `observedKeys` other keys; the changed key has none.
@MainActor
func unobservedKeyCost(observers: Int, observedKeys: Int) -> Double {
    let prefs = makePreferences(keys: observedKeys + 1)
    var received = 0
    var cancellables: [AnyCancellable] = []
    for i in 0..<observers {
        let key = "k\(1 + i % observedKeys)"
        cancellables.append(prefs.publisher(forKey: key)!.sink { _ in received += 1 })
    }
    let before = received
    let ns = measure(changes: 200_000) { value in
        // The server's split: checked once, then received as the store's change.
        let validated = try! prefs.validate(PreferencePatch(values: ["k0": .integer(value)]))
        prefs.receive(validated.entries.map { PreferenceChange(key: $0.key, value: $0.newValue, revision: 0) })
    }
    precondition(received == before, "observers of other keys must not run")
    withExtendedLifetime(cancellables) {}
    return ns
}

@MainActor
func run() {
    #if DEBUG
    print("warning: debug build; run `swift run -c release ObservingBench` for real numbers\n")
    #endif
    let counts = [100, 1_000, 10_000]
    print("Cost of one preference change (validate + apply + announce), ns per change, best of 5 rounds")
    print("")
    func row(_ cells: [String]) -> String {
        zip(cells, [9, 22, 14, 26, 28]).map { cell, width in
            String(repeating: " ", count: max(0, width - cell.count)) + cell
        }.joined(separator: " | ")
    }
    print(row(["observers", "key observed by all", "per observer", "unobserved key (others", "unobserved key (others"]))
    print(row(["", "", "", "on 1 other key)", "spread over 100 keys)"]))
    for n in counts {
        let observed = observedKeyCost(observers: n)
        let oneOther = unobservedKeyCost(observers: n, observedKeys: 1)
        let manyOther = unobservedKeyCost(observers: n, observedKeys: 100)
        print(row([String(n), "\(Int(observed)) ns", String(format: "%.1f ns", observed / Double(n)),
                   "\(Int(oneOther)) ns", "\(Int(manyOther)) ns"]))
    }
    print("")
    print("baseline: change to a key with no observers anywhere: \(Int(unobservedKeyCost(observers: 0, observedKeys: 1))) ns")
}

MainActor.assumeIsolated { run() }
