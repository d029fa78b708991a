public import Foundation
public import OpenCombine

/// Loads remote data and owns its state (the `@RemoteData` idea), generic over what it decodes.
///
/// Confined to the main actor; the request and decoding run off it. The HTTP client and the
/// sleeper (for retries and periodic refreshes) come from ``environment``, read at each load.
///
/// - ``fetchDataIfNeeded()`` starts a load only when idle: however often it is called, at
///   most one load runs.
/// - ``refresh()`` starts a load, or joins the running one.
/// - ``cancel()`` abandons the running load.
/// - Conditional requests: the last `ETag`/`Last-Modified` go out as `If-None-Match`/
///   `If-Modified-Since`. A 304, or a body identical to the last one, changes nothing.
/// - Background loads (retries, periodic refreshes) do not pass through `.loading`; only
///   their outcome is announced, and only when it differs.
///
/// ```swift
/// let loader = DataLoader<[Post]>(request: HTTPClientRequest(url: feedURL))
/// loader.environment.httpClient = client
/// loader.fetchDataIfNeeded()
/// let state = await loader.settled()
/// ```
@MainActor
public final class DataLoader<Value: Sendable>: @preconcurrency ObservableObject, EnvironmentOwner {
    /// The current state; `$state` emits it on subscription, then every change.
    @Published public private(set) var state: LoadState<Value> = .idle
    /// Sent before every change of ``state``.
    public let objectWillChange = ObservableObjectPublisher()
    public var environment: EnvironmentValues
    public var request: HTTPClientRequest
    public var policy: DataLoaderPolicy
    /// Upstream requests started so far (for metrics and tests).
    public private(set) var requestCount = 0

    @Environment(\.httpClient) private var httpClient: any HTTPClient
    @Environment(\.sleeper) private var sleeper: any Sleeper

    private let decode: @Sendable (Data) throws -> Value
    private var lastGood: Loaded<Value>?
    private var lastBody: Data?
    /// The validators the last good body came with (updated by a 304 that sends new ones):
    /// what the next request sends back. An owner that keeps the value elsewhere keeps these
    /// with it, so whoever loads next can ask conditionally.
    public private(set) var validators = Validators()
    private var running: (id: UInt64, task: Task<Void, Never>)?
    private var scheduled: (id: UInt64, task: Task<Void, Never>)?
    private var nextID: UInt64 = 0
    private var consecutiveFailures = 0

    /// A loader that decodes bodies with `decode` (run off the main actor).
    public init(request: HTTPClientRequest, environment: EnvironmentValues = EnvironmentValues(),
                policy: DataLoaderPolicy = DataLoaderPolicy(), decode: @escaping @Sendable (Data) throws -> Value) {
        self.request = request
        self.environment = environment
        self.policy = policy
        self.decode = decode
    }

    isolated deinit {
        running?.task.cancel()
        scheduled?.task.cancel()
    }

    /// True while a request is in flight (also for background loads that show no `.loading`).
    public var isFetching: Bool { running != nil }

    /// Starts a load when idle; does nothing while loading, once loaded, or after a failure
    /// (retries are automatic; call ``refresh()`` to force one).
    public func fetchDataIfNeeded() {
        guard running == nil, case .idle = state else { return }
        start(visible: true)
    }

    /// Starts a load now, or joins the one running (no second request).
    ///
    /// With `showingLoading` (the default) the state passes through `.loading(previous:)`, so
    /// a 304 then returns it to `.loaded`; pass false for a background refresh that announces
    /// only an outcome that differs (new value or failure), like the periodic refresh does.
    public func refresh(showingLoading: Bool = true) {
        guard running == nil else { return }
        start(visible: showingLoading || lastGood == nil)
    }

    /// Abandons the running load: the state returns to `loaded` (previous value) or `idle`.
    /// Returns false when no load was running.
    @discardableResult
    public func cancel() -> Bool {
        guard let current = running else { return false }
        current.task.cancel()
        running = nil
        switch state {
        case let .loading(previous), let .failed(_, previous):
            setState(previous.map(LoadState.loaded) ?? .idle)
        case .idle, .loaded:
            break
        }
        if case .loaded = state, let interval = policy.refreshInterval { schedule(after: interval) }
        return true
    }

    /// Waits until no load is running and returns the state (the server's `?wait=`).
    public func settled() async -> LoadState<Value> {
        while let current = running {
            await current.task.value
        }
        return state
    }

    // MARK: Loading

    private func start(visible: Bool) {
        updateDynamicProperties()
        scheduled?.task.cancel()
        scheduled = nil
        if visible {
            setState(.loading(previous: lastGood))
        }
        var request = self.request
        request.timeout = policy.timeout
        request.maxBodyBytes = policy.maxBodyBytes
        if lastGood != nil {
            if let etag = validators.etag { request.headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { request.headers["If-Modified-Since"] = lastModified }
        }
        nextID &+= 1
        let id = nextID
        let client = httpClient
        let decode = self.decode
        let policy = self.policy
        let previousBody = lastGood == nil ? nil : lastBody
        requestCount += 1
        let task = Task { [weak self] in
            let outcome = await Self.fetch(client: client, request: request, policy: policy,
                                           previousBody: previousBody, decode: decode)
            self?.finish(id: id, outcome: outcome)
        }
        running = (id, task)
    }

    private func finish(id: UInt64, outcome: Outcome) {
        guard running?.id == id else { return }  // cancelled or superseded: not ours to report
        running = nil
        switch outcome {
        case .cancelled:
            return
        case let .unchanged(newValidators):
            guard let lastGood else {
                fail(.unexpectedStatus(304))
                return
            }
            validators.merge(newValidators)
            consecutiveFailures = 0
            setState(.loaded(lastGood))
            if let interval = policy.refreshInterval { schedule(after: interval) }
        case let .fresh(value, body, newValidators):
            consecutiveFailures = 0
            validators = newValidators
            lastBody = body
            let loaded = Loaded(value: value, fetchedAt: Date())
            lastGood = loaded
            setState(.loaded(loaded))
            if let interval = policy.refreshInterval { schedule(after: interval) }
        case let .failure(error):
            fail(error)
        }
    }

    private func fail(_ error: DataLoaderError) {
        consecutiveFailures += 1
        setState(.failed(error, previous: lastGood))
        if let delay = policy.retryDelay(afterFailures: consecutiveFailures) { schedule(after: delay) }
    }

    /// Announces `newState` unless observers already have it (a 304, an identical body, the
    /// same failure again).
    private func setState(_ newState: LoadState<Value>) {
        guard !state.isSameAnnouncement(as: newState) else { return }
        objectWillChange.send()
        state = newState
    }

    /// A background load after `delay`, through the environment's sleeper.
    private func schedule(after delay: Duration) {
        updateDynamicProperties()
        scheduled?.task.cancel()
        nextID &+= 1
        let id = nextID
        let sleeper = self.sleeper
        let task = Task { [weak self] in
            do { try await sleeper.sleep(for: delay) } catch { return }
            guard let self, self.scheduled?.id == id else { return }
            self.scheduled = nil
            if self.running == nil { self.start(visible: false) }
        }
        scheduled = (id, task)
    }
}

extension DataLoader where Value: Decodable {
    /// A loader that decodes JSON bodies as `Value`.
    public convenience init(request: HTTPClientRequest, environment: EnvironmentValues = EnvironmentValues(),
                            policy: DataLoaderPolicy = DataLoaderPolicy()) {
        self.init(request: request, environment: environment, policy: policy) { data in
            try JSONDecoder().decode(Value.self, from: data)
        }
    }
}
