// StreamCacheAVFoundation: the AVAssetResourceLoaderDelegate adapter over the engine
// (DESIGN.md §9). Every file of this module is compiled only where AVFoundation exists.
#if canImport(AVFoundation)
import AVFoundation
import StreamCache
#endif
