import ArgumentParser
import StreamCache
import StreamCacheHLS

/// `--library DIR`: where offline packages live (default: the cache directory's `hls` folder).
struct HLSLibraryOptions: ParsableArguments {
    @Option(name: .long, help: "The offline library folder (default: the cache directory's hls folder).")
    var library: String?

    @OptionGroup var cache: CacheOptions

    var offlineLibrary: OfflineLibrary {
        library.map { OfflineLibrary(directory: $0) } ?? OfflineLibrary(cache: cache.directory)
    }
}
