import Foundation
import StreamCache
// The offline library with every format StreamCache downloads, and the models of their manifests.
@_exported import StreamCacheDASH
@_exported import StreamCacheHLS
@_exported import StreamCacheOfflineCore

extension OfflineFormat {
    /// Every format StreamCache downloads and records: HLS and MPEG-DASH.
    public static let all: [OfflineFormat] = [.dash, .hls]
}

extension OfflineLibrary {
    /// The library in `directory`, of packages of every format (``OfflineFormat/all``).
    public init(directory: String) {
        self.init(directory: directory, formats: OfflineFormat.all)
    }

    /// The library of a cache directory, of packages of every format: its `packages` folder.
    public init(cache: CacheDirectory) {
        self.init(cache: cache, formats: OfflineFormat.all)
    }

    /// The user's library, of packages of every format (``userDefault(cache:environment:platformSupport:formats:)``).
    public static func userDefault(
        cache: CacheDirectory,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        platformSupport: String? = AppContainer.directory(for: .applicationSupportDirectory)
    ) -> (library: OfflineLibrary, note: String?) {
        userDefault(
            cache: cache,
            environment: environment,
            platformSupport: platformSupport,
            formats: OfflineFormat.all
        )
    }
}
