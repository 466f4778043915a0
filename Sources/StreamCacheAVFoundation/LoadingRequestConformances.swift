#if canImport(AVFoundation) && !os(watchOS)
import AVFoundation
import StreamCache
import StreamCacheResourceLoader

// AVFoundation's request classes already have every member the protocols ask for, with the
// same names and types; the conformances only say so.

extension AVAssetResourceLoadingRequest: @retroactive ResourceLoadingRequest {}

extension AVAssetResourceLoadingContentInformationRequest: @retroactive ResourceLoadingContentInformationRequest {}

extension AVAssetResourceLoadingDataRequest: @retroactive ResourceLoadingDataRequest {}
#endif
