import Foundation
import StreamCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``OriginClient`` on `URLSession`: the one an iOS or macOS app uses (no SwiftNIO needed).
///
/// The body streams through a delegate; when the reader falls more than a few MiB behind, the
/// task is suspended until it catches up, so memory stays bounded.
public final class URLSessionOriginClient: OriginClient {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a client with an ephemeral session (no cookies, no URL cache).
    ///
    /// - Parameter timeout: how long the origin may stay silent before the request fails.
    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        delegate = SessionDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func fetch<Result: Sendable>(
        _ request: OriginRequest,
        _ handle: @Sendable (OriginResponseHead, OriginBody) async throws -> Result
    ) async throws -> Result {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body.map { Data($0) }
        for field in request.allHeaders { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        let task = session.dataTask(with: urlRequest)
        let transfer = Transfer(task: task, url: request.url)
        delegate.register(transfer, for: task)
        defer {
            task.cancel()
            delegate.unregister(task)
        }
        return try await withTaskCancellationHandler {
            task.resume()
            let head = try await transfer.head()
            return try await handle(head, OriginBody { try await transfer.nextChunk() })
        } onCancel: {
            task.cancel()
        }
    }
}

/// Routes `URLSession` delegate callbacks to the transfer of each task.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let transfers = Locked<[Int: Transfer]>([:])

    func register(_ transfer: Transfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    func unregister(_ task: URLSessionTask) {
        _ = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func transfer(_ task: URLSessionTask) -> Transfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        transfer(dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        transfer(task)?.completed(error)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Handed back like any answer: the engine follows redirects, checking each target.
        completionHandler(nil)
    }
}

/// The state of one `URLSession` transfer, shared by the delegate queue and the reading task.
private final class Transfer: Sendable {
    private static let highWater = 4 << 20
    private static let lowWater = 1 << 20

    private let task: URLSessionDataTask
    private let url: URL
    private let state = Locked(State())

    private struct State {
        var response: OriginResponseHead?
        var chunks: [Data] = []
        var buffered = 0
        var suspended = false
        var finished = false
        var failure: Error?
        var headWaiter: CheckedContinuation<OriginResponseHead, Error>?
        var chunkWaiter: CheckedContinuation<[UInt8]?, Error>?
    }

    init(task: URLSessionDataTask, url: URL) {
        self.task = task
        self.url = url
    }

    func received(_ urlResponse: URLResponse) {
        guard let http = urlResponse as? HTTPURLResponse else { return }
        var fields: [HeaderField] = []
        for (name, value) in http.allHeaderFields {
            fields.append(HeaderField("\(name)", "\(value)"))
        }
        let head = OriginResponseHead(status: http.statusCode, headers: fields, url: http.url ?? url)
        let waiter = state.withLock { state in
            state.response = head
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: head)
    }

    func received(_ data: Data) {
        // The task is suspended and resumed under the lock, so the two never cross.
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Error>? in
            if let waiter = state.chunkWaiter {
                state.chunkWaiter = nil
                return waiter
            }
            state.chunks.append(data)
            state.buffered += data.count
            if state.buffered > Self.highWater, !state.suspended {
                state.suspended = true
                task.suspend()
            }
            return nil
        }
        waiter?.resume(returning: [UInt8](data))
    }

    func completed(_ error: Error?) {
        let failure = error.map(translate)
        let (head, chunk, response) = state.withLock { state in
            state.finished = true
            state.failure = failure
            defer {
                state.headWaiter = nil
                state.chunkWaiter = nil
            }
            return (state.headWaiter, state.chunkWaiter, state.response)
        }
        if let head {
            if let response {
                head.resume(returning: response)
            } else {
                head.resume(throwing: failure ?? noResponse)
            }
        }
        if let chunk {
            if let failure { chunk.resume(throwing: failure) } else { chunk.resume(returning: nil) }
        }
    }

    func head() async throws -> OriginResponseHead {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<OriginResponseHead, Error>? in
                if let response = state.response { return .success(response) }
                if state.finished { return .failure(state.failure ?? noResponse) }
                state.headWaiter = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    func nextChunk() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<[UInt8]?, Error>? in
                if !state.chunks.isEmpty {
                    let data = state.chunks.removeFirst()
                    state.buffered -= data.count
                    if state.suspended, state.buffered < Self.lowWater {
                        state.suspended = false
                        task.resume()
                    }
                    return .success([UInt8](data))
                }
                if state.finished { return state.failure.map { .failure($0) } ?? .success(nil) }
                state.chunkWaiter = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private var noResponse: StreamCacheError {
        StreamCacheError(.originUnreachable, "origin \(url.originName) sent no response")
    }

    private func translate(_ error: Error) -> Error {
        let host = url.originName
        guard let urlError = error as? URLError else {
            return StreamCacheError(.originUnreachable, "origin \(host): \(error.localizedDescription)")
        }
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut: return StreamCacheError(.originTimeout, "origin \(host) timed out")
        case .httpTooManyRedirects: return StreamCacheError(.tooManyRedirects, "origin \(host): too many redirects")
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return StreamCacheError(.originUnreachable, "cannot connect to \(host)")
        case .networkConnectionLost:
            return StreamCacheError(.originUnreachable, "origin \(host) closed the connection early")
        default:
            return StreamCacheError(.originUnreachable, "origin \(host): \(urlError.localizedDescription)")
        }
    }
}
