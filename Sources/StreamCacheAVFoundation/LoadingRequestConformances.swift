#if canImport(AVFoundation) && !os(watchOS)
import AVFoundation
import StreamCache
import StreamCacheResourceLoader

// AVFoundation's request classes already have every member the protocols ask for, with the
// same names and types; the conformances only say so.

extension AVAssetResourceLoadingRequest: ResourceLoadingRequest {}

extension AVAssetResourceLoadingContentInformationRequest: ResourceLoadingContentInformationRequest {}

extension AVAssetResourceLoadingDataRequest: ResourceLoadingDataRequest {}
#endif
