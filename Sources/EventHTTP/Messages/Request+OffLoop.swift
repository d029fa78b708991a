import Foundation

extension Request {
    /// Bodies up to this size are decoded on the loop; larger ones on the cooperative pool, so
    /// that no single request holds the loop for more than a few milliseconds (decoding 1 MiB of
    /// JSON takes ~10 ms, normalising 10,000 things ~50 ms).
    public static let offLoopBodyThreshold = 32 << 10

    /// Runs `work` (decoding the body and any pure checks of it) off the loop when the body is
    /// large, then `then` on the loop with its result; a thrown problem is sent as the answer.
    /// Small bodies run both at once, on the loop.
    ///
    /// ```swift
    /// router.put("/things") { request, responder in
    ///     request.process(responder, { try request.decode(Body.self).things }) { list in ... }
    /// }
    /// ```
    @MainActor
    public func process<T: Sendable>(_ responder: Responder,
                                     _ work: @escaping @Sendable () throws(ProblemDetails) -> T,
                                     then: @escaping @MainActor (T) -> Void) {
        guard body.count > Self.offLoopBodyThreshold else {
            do { then(try work()) } catch { responder.send(.problem(error)) }
            return
        }
        Task { @MainActor in
            let result = await Task.detached { () -> Result<T, ProblemDetails> in
                do throws(ProblemDetails) { return .success(try work()) } catch { return .failure(error) }
            }.value
            switch result {
            case let .success(value): then(value)
            case let .failure(problem): responder.send(.problem(problem))
            }
        }
    }
}
