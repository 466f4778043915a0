import Foundation
import StreamCache
import StreamCacheResourceLoader

/// Drives a ``ResourceLoaderEngine`` the way AVPlayer drives its resource loader delegate, and
/// keeps every request it made so tests can check what each received.
///
/// The patterns are AVPlayer's: content information with `bytes=0-1` first; then a request to
/// the end of the resource that is cancelled once the player has enough; ranged requests after
/// seeks; requests that overlap (an MP4's index at the end of the file); storms of requests
/// cancelled as fast as they start.
public final class AVPlayerSimulator: @unchecked Sendable {
    // `DispatchSpecificKey` is not Sendable; it is only read.
    public let loader: ResourceLoaderEngine
    private let queueKey = DispatchSpecificKey<Void>()
    private let made = Locked<[SimulatedLoadingRequest]>([])

    public init(loader: ResourceLoaderEngine) {
        self.loader = loader
        loader.queue.setSpecific(key: queueKey, value: ())
    }

    /// Every request made so far.
    public var requests: [SimulatedLoadingRequest] { made.value }

    /// Content information and `bytes=0-1`, as AVPlayer opens an asset.
    public func openAsset(_ url: URL) async throws -> SimulatedLoadingRequest {
        try await load(url, contentInformation: true, data: (0, 2))
    }

    /// Makes a request and waits until it is finished.
    ///
    /// - Throws: ``SimulatorError`` if the loader declines it or does not finish it in time.
    @discardableResult
    public func load(
        _ url: URL,
        contentInformation: Bool = false,
        data: (offset: Int64, length: Int?)?,
        timeout: Duration = .seconds(60)
    ) async throws -> SimulatedLoadingRequest {
        let request = start(url, contentInformation: contentInformation, data: data)
        guard loader.shouldWaitForLoading(request) else { throw SimulatorError("the loader declined \(url)") }
        try await waitUntilFinished(request, timeout: timeout)
        return request
    }

    /// Makes a request to the end of the resource from `offset` and cancels it once it received
    /// `bytes` (at once for 0), as AVPlayer does when it has buffered enough or the user seeks.
    @discardableResult
    public func loadThenCancel(_ url: URL, from offset: Int64, after bytes: Int) async throws -> SimulatedLoadingRequest
    {
        let request = start(url, contentInformation: false, data: (offset, nil))
        let reached = AsyncStream<Void>.makeStream()
        request.onData { total in if total >= bytes { reached.continuation.yield() } }
        guard loader.shouldWaitForLoading(request) else { throw SimulatorError("the loader declined \(url)") }
        if bytes > 0 {
            var iterator = reached.stream.makeAsyncIterator()
            _ = await iterator.next()
        }
        request.markCancelled()
        loader.didCancel(request)
        return request
    }

    /// `count` requests for `length` bytes at spread-out offsets, each cancelled right after it
    /// starts.
    public func cancellationStorm(_ url: URL, count: Int, length: Int64, span: Int, step: Int) {
        for index in 0..<count {
            let offset = Int64((index * step) % max(1, span - Int(length)))
            let request = start(url, contentInformation: false, data: (offset, Int(length)))
            _ = loader.shouldWaitForLoading(request)
            request.markCancelled()
            loader.didCancel(request)
        }
    }

    private func start(
        _ url: URL,
        contentInformation: Bool,
        data: (offset: Int64, length: Int?)?
    ) -> SimulatedLoadingRequest {
        let custom = CustomSchemeURL.wrapping(url) ?? url
        let request = SimulatedLoadingRequest(
            url: custom,
            contentInformation: contentInformation,
            data: data,
            queueKey: queueKey
        )
        made.withLock { $0.append(request) }
        return request
    }

    private func waitUntilFinished(_ request: SimulatedLoadingRequest, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !request.isFinished {
            guard ContinuousClock.now < deadline else {
                throw SimulatorError(
                    "request \(request.request.url?.absoluteString ?? "") did not finish in \(timeout)"
                )
            }
            // Often enough for a test, seldom enough not to crowd the tasks of the tests beside it.
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// The simulator could not drive a scenario.
public struct SimulatorError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
