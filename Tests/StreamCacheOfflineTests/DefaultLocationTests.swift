import Foundation
import StreamCache
import StreamCacheOffline
import Testing

/// Where the cache and the offline library go by default: XDG for the command-line tool, the
/// app container's Caches and Application Support in an app.
@Suite struct DefaultLocationTests {
    @Test func anAppCachesInItsCachesDirectoryAndTheToolWhereXDGSays() {
        let app = CacheDirectory.default(environment: ["HOME": "/c"], platformCaches: "/c/Library/Caches")
        #expect(app.path == "/c/Library/Caches/StreamCache")
        let tool = CacheDirectory.default(environment: ["HOME": "/h"], platformCaches: nil)
        #expect(tool.path == "/h/.cache/streamcache")
        let xdg = CacheDirectory.default(environment: ["XDG_CACHE_HOME": "/x"], platformCaches: "/c/Library/Caches")
        #expect(xdg.path == "/x/streamcache")
        let told = CacheDirectory.default(environment: ["STREAMCACHE_DIR": "/s"], platformCaches: "/c/Library/Caches")
        #expect(told.path == "/s")
        // This process is the command-line tool's kind: no container.
        #expect(CacheDirectory.platformCachesDirectory == nil)
    }

    @Test func anAppKeepsOfflinePackagesInApplicationSupportNotInCaches() {
        let cache = CacheDirectory(path: "/nonexistent/cache")
        let app = OfflineLibrary.userDefault(
            cache: cache,
            environment: ["HOME": "/c"],
            platformSupport: "/c/Library/Application Support"
        )
        #expect(app.library.directory == "/c/Library/Application Support/StreamCache/packages")
        let tool = OfflineLibrary.userDefault(cache: cache, environment: ["HOME": "/h"], platformSupport: nil)
        #expect(tool.library.directory == "/h/.local/share/streamcache/packages")
    }
}
