import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What one URLSession task reports, called on the session's delegate queue.
protocol TransferHandler: AnyObject, Sendable {
    /// The response head; return false to cancel the transfer.
    func received(response: HTTPURLResponse) -> Bool
    /// A piece of the body; return false to cancel the transfer.
    func received(data: Data) -> Bool
    /// The end: nil for a complete body, else why it stopped.
    func completed(error: (any Error)?)
}

/// Routes the callbacks of every task of one session to the task's ``TransferHandler``.
/// One delegate per session because URLSession keeps its delegate for its whole life.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// By task identifier. URLSession calls in on its delegate queue, `register` from anywhere.
    private let handlers = Mutex<[Int: any TransferHandler]>([:])

    func register(_ task: URLSessionTask, _ handler: any TransferHandler) {
        let id = task.taskIdentifier
        handlers.withLock { $0[id] = handler }
    }

    private func handler(_ task: URLSessionTask, remove: Bool = false) -> (any TransferHandler)? {
        let id = task.taskIdentifier
        return handlers.withLock { remove ? $0.removeValue(forKey: id) : $0[id] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse, let handler = handler(dataTask) else {
            completionHandler(.cancel)
            return
        }
        completionHandler(handler.received(response: http) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let handler = handler(dataTask), !handler.received(data: data) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        handler(task, remove: true)?.completed(error: error)
    }

    // Redirects are not part of the contract; follow none, so a bearer token never travels on.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
