import ArgumentParser
import StreamCache
import StreamCacheOffline

/// `--library DIR`: where offline packages live (default: ``OfflineLibrary/userDefault(cache:environment:)``).
struct LibraryOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The offline library folder (default: $STREAMCACHE_LIBRARY, else $XDG_DATA_HOME/streamcache/packages, else ~/.local/share/streamcache/packages)."
    )
    var library: String?

    @OptionGroup var cache: CacheOptions

    var offlineLibrary: OfflineLibrary { Self.library(library, cache: cache) }

    /// The library `--library` names, else the user's (one line on stderr if it was moved there).
    static func library(_ path: String?, cache: CacheOptions) -> OfflineLibrary {
        if let path { return OfflineLibrary(directory: path) }
        let (library, note) = OfflineLibrary.userDefault(cache: cache.directory)
        if let note { Warning.print(note) }
        return library
    }
}
