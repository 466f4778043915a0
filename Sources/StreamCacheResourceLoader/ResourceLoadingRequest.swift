import Foundation
import StreamCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What ``ResourceLoaderEngine`` needs of an `AVAssetResourceLoadingRequest`, member for member
/// as AVFoundation has it, so the engine runs (and is tested) on every platform.
/// `StreamCacheAVFoundation` conforms AVFoundation's classes to these protocols.
public protocol ResourceLoadingRequest: AnyObject {
    associatedtype ContentInformationRequest: ResourceLoadingContentInformationRequest
    associatedtype DataRequest: ResourceLoadingDataRequest
    /// The request the player made (its URL has the custom scheme).
    var request: URLRequest { get }
    var contentInformationRequest: ContentInformationRequest? { get }
    var dataRequest: DataRequest? { get }
    var isFinished: Bool { get }
    var isCancelled: Bool { get }
    func finishLoading()
    func finishLoading(with error: (any Error)?)
}

/// `AVAssetResourceLoadingContentInformationRequest`.
public protocol ResourceLoadingContentInformationRequest: AnyObject {
    /// A uniform type identifier (`public.mp3`), not a MIME type.
    var contentType: String? { get set }
    /// The types the player accepts here, if it says (`contentType` must be one of them).
    var allowedContentTypes: [String]? { get }
    var contentLength: Int64 { get set }
    var isByteRangeAccessSupported: Bool { get set }
    var isEntireLengthAvailableOnDemand: Bool { get set }
}

/// `AVAssetResourceLoadingDataRequest`.
public protocol ResourceLoadingDataRequest: AnyObject {
    var requestedOffset: Int64 { get }
    var requestedLength: Int { get }
    var requestsAllDataToEndOfResource: Bool { get }
    /// Where the next byte handed to ``respond(with:)`` goes (AVFoundation advances it).
    var currentOffset: Int64 { get }
    func respond(with data: Data)
}
