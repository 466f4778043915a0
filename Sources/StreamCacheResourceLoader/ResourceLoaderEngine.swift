import Foundation
import StreamCache

/// Does the work of an `AVAssetResourceLoaderDelegate` on the cache engine: content information
/// from the cache or a `bytes=0-1` fetch, data requests answered progressively from the resource
/// session, each request finished exactly once, cancellation that stops only that request's
/// work. Every call into a request happens on ``queue``: give AVFoundation the same queue; a
/// delegate call that arrives on another queue is carried out on ``queue`` (synchronously), so a
/// cancellation never races the work on a request.
///
/// A request moves `loading → finished` or `loading → cancelled`; once it has left `loading`
/// nothing more is handed to it.
public final class ResourceLoaderEngine: @unchecked Sendable {
    // Request objects are touched only on `queue`.
    public let engine: CacheEngine
    /// The serial queue every callback into a request runs on.
    public let queue: DispatchQueue
    private let loads = Locked<[ObjectIdentifier: Task<Void, Never>]>([:])
    /// Set on ``queue``, to tell whether a call runs on it.
    private let queueKey = DispatchSpecificKey<Void>()

    /// How much of a resource whose origin sends no length is read to learn it before giving up
    /// (a live stream never ends; AVPlayer needs a length for a progressive file).
    public static let lengthLearningLimit: Int64 = 1 << 30

    public init(engine: CacheEngine, queue: DispatchQueue = DispatchQueue(label: "StreamCache.ResourceLoader")) {
        self.engine = engine
        self.queue = queue
        queue.setSpecific(key: queueKey, value: ())
    }

    /// How many requests are loading now (for tests and diagnostics).
    public var activeLoads: Int { loads.value.count }

    /// `resourceLoader(_:shouldWaitForLoadingOfRequestedResource:)`: starts loading and returns
    /// `true` for a custom-scheme URL (``CustomSchemeURL``); `false` for anything else and for a
    /// request already cancelled.
    public func shouldWaitForLoading(_ request: any ResourceLoadingRequest) -> Bool {
        onLoaderQueue { startLoading(request) }
    }

    /// `resourceLoader(_:didCancel:)`: stops that request's work; it is never finished after this.
    public func didCancel(_ request: any ResourceLoadingRequest) {
        onLoaderQueue {
            let task = loads.withLock { $0.removeValue(forKey: ObjectIdentifier(request)) }
            task?.cancel()
        }
    }

    /// Runs `body` on ``queue``: at once when called there, else waiting for it.
    private func onLoaderQueue<Result>(_ body: () -> Result) -> Result {
        DispatchQueue.getSpecific(key: queueKey) != nil ? body() : queue.sync(execute: body)
    }

    private func startLoading(_ request: any ResourceLoadingRequest) -> Bool {
        guard let url = request.request.url, let origin = CustomSchemeURL.origin(of: url), !request.isCancelled else {
            return false
        }
        let handle = RequestHandle(request)
        // Owned by the loader: kept in `loads` until the request is finished, cancelled by
        // `didCancel` (AVFoundation owns the request's life).
        loads.withLock { $0[handle.id] = Task { await self.load(handle, from: origin) } }
        return true
    }

    // MARK: Loading

    private func load(_ handle: RequestHandle, from url: URL) async {
        do {
            // One open per loading request: content information and bytes from one session.
            let resource = try await engine.open(url)
            // The types AVPlayer allows, when it asks for content information.
            let asked = try await onQueue(handle) { request in
                request.contentInformationRequest.map { $0.allowedContentTypes ?? [] }
            }
            if let allowedTypes = asked ?? nil {
                let answer = try await Self.contentAnswer(of: resource, allowedTypes: allowedTypes)
                try await onQueue(handle) { request in
                    guard let content = request.contentInformationRequest else { return }
                    content.contentType = answer.type
                    content.contentLength = answer.length
                    // The engine serves any range itself, from an origin that ignores ranges too.
                    content.isByteRangeAccessSupported = true
                    // All of it on disk: AVPlayer may read it as fast as it likes.
                    content.isEntireLengthAvailableOnDemand = answer.complete
                }
            }
            if let wanted = try await onQueue(handle, { Self.wantedBytes(of: $0.dataRequest) }) ?? nil {
                try await deliver(wanted, of: resource, to: handle)
            }
            try await finish(handle, error: nil)
        } catch is CancellationError {
            // Cancelled by AVFoundation: it is not finished.
        } catch {
            try? await finish(handle, error: error)
        }
    }

    /// The content information of `resource`. An origin that sends no length has it learned (the
    /// resource read to its end, into the cache), never reported as 0, which AVPlayer takes for
    /// an empty file; a type that neither the origin nor the URL tell is sniffed from the first
    /// bytes.
    ///
    /// - Throws: ``StreamCacheError`` when the length or the type cannot be told, or the type is
    ///   not one AVPlayer allows here (`finishLoading` would raise an exception).
    private static func contentAnswer(
        of resource: CachedResource,
        allowedTypes: [String]
    ) async throws -> (type: String, length: Int64, complete: Bool) {
        // A live stream never ends: it plays through the in-app server, not the resource loader.
        let known = try await resource.infoWithLength(readingAtMost: lengthLearningLimit)
        guard let length = known.length else {
            throw StreamCacheError(.originProtocolViolation, "\(resource.url.absoluteString) sends no length")
        }
        var type = UniformType.identifier(mimeType: known.contentType, url: resource.url)
        if type == nil, length > 0 {
            var leading: [UInt8] = []
            for try await chunk in resource.read(from: 0, length: min(length, Int64(UniformType.sniffedLength))) {
                leading += chunk
            }
            type = UniformType.identifier(leadingBytes: leading)
        }
        guard let type else {
            throw StreamCacheError(
                .originProtocolViolation,
                "cannot tell the media type of \(resource.url.absoluteString) (\(known.contentType ?? "no type"))"
            )
        }
        guard allowedTypes.isEmpty || allowedTypes.contains(type) else {
            throw StreamCacheError(
                .originProtocolViolation,
                "\(resource.url.absoluteString) is \(type), which the player does not allow here"
            )
        }
        return (type, length, await resource.isComplete())
    }

    /// The bytes a data request still wants: from `currentOffset` to its end (`nil`: to the end
    /// of the resource).
    private static func wantedBytes(of dataRequest: (any ResourceLoadingDataRequest)?) -> (Int64, Int64?)? {
        guard let dataRequest else { return nil }
        let start = dataRequest.currentOffset
        if dataRequest.requestsAllDataToEndOfResource { return (start, nil) }
        let end = dataRequest.requestedOffset + Int64(dataRequest.requestedLength)
        return (start, max(0, end - start))
    }

    private func deliver(
        _ wanted: (offset: Int64, length: Int64?),
        of resource: CachedResource,
        to handle: RequestHandle
    ) async throws {
        guard wanted.length != 0 else { return }
        try CacheEngine.validateRange(offset: wanted.offset, length: wanted.length)
        let stream = resource.read(from: wanted.offset, length: wanted.length)
        var delivered = false
        for try await chunk in stream {
            delivered = true
            let data = Data(chunk)
            try await onQueue(handle) { $0.dataRequest?.respond(with: data) }
        }
        let last = wanted.length.map { wanted.offset + $0 - 1 }
        if !delivered, let length = await stream.currentInfo().length,
            RangeSpecifier.from(first: wanted.offset, last: last).resolve(length: length) == nil
        {
            throw StreamCacheError(
                .rangeNotSatisfiable,
                "data request at offset \(wanted.offset) is past the end of \(resource.url.absoluteString) (\(length) bytes)"
            )
        }
    }

    private func finish(_ handle: RequestHandle, error: (any Error)?) async throws {
        try await onQueue(handle) { request in
            // Leaving `loading` under the lock: a cancellation after this finds nothing to cancel.
            // AVFoundation marks a request cancelled before it tells the delegate: one marked so
            // is never finished.
            guard self.loads.withLock({ $0.removeValue(forKey: handle.id) }) != nil, !request.isCancelled
            else { return }
            if let error { request.finishLoading(with: error) } else { request.finishLoading() }
        }
    }

    /// Runs `body` with the request on ``queue`` if it is still loading.
    ///
    /// - Returns: what `body` returned; `nil` if the request is no longer loading.
    /// - Throws: `CancellationError` once the request was cancelled.
    @discardableResult
    private func onQueue<Result: Sendable>(
        _ handle: RequestHandle,
        _ body: @escaping @Sendable (any ResourceLoadingRequest) -> Result
    ) async throws -> Result? {
        try Task.checkCancellation()
        let result: Result? = await withCheckedContinuation { continuation in
            queue.async {
                let loading = self.loads.withLock { $0[handle.id] != nil }
                continuation.resume(returning: loading ? body(handle.request) : nil)
            }
        }
        try Task.checkCancellation()
        return result
    }
}

/// A request handed between tasks; it is touched only on the engine's queue.
private final class RequestHandle: @unchecked Sendable {
    let request: any ResourceLoadingRequest
    let id: ObjectIdentifier

    init(_ request: any ResourceLoadingRequest) {
        self.request = request
        self.id = ObjectIdentifier(request)
    }
}
