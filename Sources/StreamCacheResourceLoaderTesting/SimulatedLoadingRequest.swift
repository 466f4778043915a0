import Foundation
import StreamCache
import StreamCacheResourceLoader

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loading request as AVPlayer makes them, recording everything the resource loader does to
/// it: content information set, bytes received, how often and how it was finished, and whether
/// any call came off the loader's queue or after the request had finished.
public final class SimulatedLoadingRequest: ResourceLoadingRequest, @unchecked Sendable {
    // `DispatchSpecificKey` is not Sendable; it is only read.
    public let request: URLRequest
    public let contentInformationRequest: SimulatedContentInformationRequest?
    public let dataRequest: SimulatedDataRequest?
    private let queueKey: DispatchSpecificKey<Void>?
    private let state = Locked(State())

    private struct State {
        var finishes = 0
        var finishError: (any Error)?
        var cancelled = false
        var violations: [String] = []
        var onData: (@Sendable (Int) -> Void)?
    }

    /// - Parameters:
    ///   - url: the custom-scheme URL.
    ///   - contentInformation: whether AVPlayer asks for content information.
    ///   - data: the data request's offset and length (`nil` length: to the end), if any.
    ///   - queueKey: set on the loader's queue; a call without it is recorded as a violation.
    public init(
        url: URL,
        contentInformation: Bool,
        data: (offset: Int64, length: Int?)?,
        queueKey: DispatchSpecificKey<Void>? = nil
    ) {
        request = URLRequest(url: url)
        self.queueKey = queueKey
        let content = contentInformation ? SimulatedContentInformationRequest() : nil
        contentInformationRequest = content
        let dataRequest = data.map { SimulatedDataRequest(offset: $0.offset, length: $0.length) }
        self.dataRequest = dataRequest
        content?.parent = self
        dataRequest?.parent = self
    }

    public var isFinished: Bool { state.value.finishes > 0 }
    public var isCancelled: Bool { state.value.cancelled }
    /// How many times the request was finished (1 when all is well).
    public var finishCount: Int { state.value.finishes }
    public var error: (any Error)? { state.value.finishError }
    /// The bytes the data request received, in order.
    public var received: [UInt8] { dataRequest?.received ?? [] }
    /// Calls off the queue, data after the finish, a second finish…
    public var problems: [String] { state.value.violations }

    public func finishLoading() { finishLoading(with: nil) }

    public func finishLoading(with error: (any Error)?) {
        check("finish")
        state.withLock {
            $0.finishes += 1
            $0.finishError = error
        }
    }

    /// Marks the request cancelled, as AVPlayer does before it calls `didCancel`.
    public func markCancelled() { state.withLock { $0.cancelled = true } }

    /// Calls `handler` with the total received after each delivery (on the loader's queue).
    public func onData(_ handler: @escaping @Sendable (Int) -> Void) { state.withLock { $0.onData = handler } }

    var dataHandler: (@Sendable (Int) -> Void)? { state.value.onData }

    func check(_ what: String) {
        let offQueue = queueKey.map { DispatchQueue.getSpecific(key: $0) == nil } ?? false
        state.withLock {
            if offQueue { $0.violations.append("\(what) off the loader's queue") }
            if $0.finishes > 0 { $0.violations.append("\(what) after the request was finished") }
        }
    }
}

/// `AVAssetResourceLoadingContentInformationRequest` in the simulator.
public final class SimulatedContentInformationRequest: ResourceLoadingContentInformationRequest,
    @unchecked Sendable
{
    // Set only on the loader's queue; read by the test after the request finished.
    weak var parent: SimulatedLoadingRequest?
    public var contentType: String? { didSet { parent?.check("contentType") } }
    /// What AVPlayer allows; empty or `nil` for anything.
    public var allowedContentTypes: [String]?
    public var contentLength: Int64 = 0 { didSet { parent?.check("contentLength") } }
    public var isByteRangeAccessSupported = false { didSet { parent?.check("isByteRangeAccessSupported") } }
    public var isEntireLengthAvailableOnDemand = false
}

/// `AVAssetResourceLoadingDataRequest` in the simulator: `currentOffset` advances as data arrives.
public final class SimulatedDataRequest: ResourceLoadingDataRequest, @unchecked Sendable {
    // `parent` is set once, before the loader sees the request.
    weak var parent: SimulatedLoadingRequest?
    public let requestedOffset: Int64
    public let requestedLength: Int
    public let requestsAllDataToEndOfResource: Bool
    private let state: Locked<(offset: Int64, bytes: [UInt8])>

    init(offset: Int64, length: Int?) {
        requestedOffset = offset
        requestedLength = length ?? Int.max
        requestsAllDataToEndOfResource = length == nil
        state = Locked((offset, []))
    }

    public var currentOffset: Int64 { state.value.offset }
    /// Everything received, in order.
    public var received: [UInt8] { state.value.bytes }

    public func respond(with data: Data) {
        parent?.check("data")
        let total = state.withLock {
            $0.bytes += data
            $0.offset += Int64(data.count)
            return $0.bytes.count
        }
        parent?.dataHandler?(total)
    }
}
