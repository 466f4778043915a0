// The shapes of the AVFoundation classes StreamCacheAVFoundation uses, as the iOS 18 SDK headers
// declare them (AVAssetResourceLoader.h, AVAsset.h, AVPlayerItem.h), so that its Swift can be
// type-checked on Linux by typecheck-apple-only.sh. Not AVFoundation: apple.yml builds against
// the real SDK.
@_exported import Foundation
@_exported import Dispatch
import FoundationNetworking
open class AVAssetResourceLoader: NSObject {
    open func setDelegate(_ delegate: (any AVAssetResourceLoaderDelegate)?, queue: DispatchQueue?) {}
}
public protocol AVAssetResourceLoaderDelegate: NSObjectProtocol {
    func resourceLoader(_ resourceLoader: AVAssetResourceLoader, shouldWaitForLoadingOfRequestedResource loadingRequest: AVAssetResourceLoadingRequest) -> Bool
    func resourceLoader(_ resourceLoader: AVAssetResourceLoader, didCancel loadingRequest: AVAssetResourceLoadingRequest)
}
open class AVAssetResourceLoadingContentInformationRequest: NSObject {
    open var contentType: String?
    open var allowedContentTypes: [String]? { nil }
    open var contentLength: Int64 = 0
    open var isByteRangeAccessSupported = false
    open var isEntireLengthAvailableOnDemand = false
}
open class AVAssetResourceLoadingDataRequest: NSObject {
    open var requestedOffset: Int64 { 0 }
    open var requestedLength: Int { 0 }
    open var requestsAllDataToEndOfResource: Bool { false }
    open var currentOffset: Int64 { 0 }
    open func respond(with data: Data) {}
}
open class AVAssetResourceLoadingRequest: NSObject {
    open var request: URLRequest { URLRequest(url: URL(string: "x:")!) }
    open var contentInformationRequest: AVAssetResourceLoadingContentInformationRequest? { nil }
    open var dataRequest: AVAssetResourceLoadingDataRequest? { nil }
    open var isFinished: Bool { false }
    open var isCancelled: Bool { false }
    open func finishLoading() {}
    open func finishLoading(with error: (any Error)?) {}
}
open class AVAsset: NSObject {}
open class AVURLAsset: AVAsset {
    public init(url: URL) {}
    open var resourceLoader: AVAssetResourceLoader { AVAssetResourceLoader() }
}
@MainActor open class AVPlayerItem: NSObject {
    public init(asset: AVAsset) {}
}
