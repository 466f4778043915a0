import Foundation

/// The layout of a cache directory: `index.sqlite`, `data/<id>` files, and `owners/<token>`,
/// the marks of the engines running on it.
public struct CacheDirectory: Sendable, Hashable {
    /// The directory itself.
    public let path: String

    /// Uses `path` as the cache directory (created on ``prepare()``).
    public init(path: String) {
        self.path = (path as NSString).standardizingPath
    }

    /// The default directory: `$STREAMCACHE_DIR`, else `$XDG_CACHE_HOME/streamcache`, else in an
    /// app `StreamCache` in its Caches directory (not backed up, and purgeable when the device runs
    /// short of space), else `~/.cache/streamcache` (the command-line tool, macOS included).
    ///
    /// - Parameter platformCaches: the app's Caches directory (the default:
    ///   ``platformCachesDirectory``).
    public static func `default`(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        platformCaches: String? = platformCachesDirectory
    ) -> CacheDirectory {
        if let dir = environment["STREAMCACHE_DIR"], !dir.isEmpty { return CacheDirectory(path: dir) }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return CacheDirectory(path: xdg + "/streamcache") }
        if let platformCaches { return CacheDirectory(path: platformCaches + "/StreamCache") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return CacheDirectory(path: home + "/.cache/streamcache")
    }

    /// The app's Caches directory: on iOS, tvOS, visionOS and watchOS, and in a sandboxed macOS
    /// app; `nil` elsewhere, where XDG applies.
    public static var platformCachesDirectory: String? {
        AppContainer.directory(for: .cachesDirectory)
    }

    /// The file that holds the directory's settings (its byte budget).
    public var settingsPath: String { path + "/settings.json" }

    /// Whether the directory holds an index (a cache was made here).
    public var hasIndex: Bool { FileManager.default.fileExists(atPath: indexPath) }

    /// The path of the index database.
    public var indexPath: String { path + "/index.sqlite" }

    /// The folder of data files.
    public var dataDirectory: String { path + "/data" }

    /// The folder where each running engine leaves its ``ProcessMark``.
    var ownersDirectory: String { path + "/owners" }

    /// The data file of resource `id`. Named by id, never by URL text.
    public func dataPath(id: Int64) -> String { dataDirectory + "/\(id)" }

    /// Creates the directory and its `data` folder if needed, and checks they are writable.
    ///
    /// Every folder it creates (a missing `~/.cache` too, as XDG asks) is the user's alone (0700).
    ///
    /// - Throws: ``StreamCacheError/Kind/storage`` with the reason.
    public func prepare() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StreamCacheError(.storage, "cache directory \(path) is a file, not a directory")
            }
            guard access(path, W_OK) == 0 else {
                throw StreamCacheError(.storage, "cache directory \(path) is read-only")
            }
        }
        if let (folder, code) = PrivateFolders.create(dataDirectory) {
            throw StreamCacheError(
                .storage,
                "cannot create cache directory \(path): " + (folder == path ? "" : "\(folder): ")
                    + String(cString: strerror(code))
            )
        }
        guard access(path, W_OK) == 0, access(dataDirectory, W_OK) == 0 else {
            throw StreamCacheError(.storage, "cache directory \(path) is not writable")
        }
        try keepPrivate()
    }

    /// Moves a damaged `index.sqlite` (and its WAL files) to `index.sqlite.damaged-<time>` and
    /// deletes the data files, which nothing describes any more.
    ///
    /// - Returns: where the index went.
    public func setDamagedIndexAside() throws -> String {
        let stamp = indexPath + ".damaged-" + String(Int(Date().timeIntervalSince1970))
        var aside = stamp
        var counter = 1
        while FileManager.default.fileExists(atPath: aside) {
            counter += 1
            aside = stamp + "-\(counter)"
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: indexPath + suffix) {
            guard rename(indexPath + suffix, aside + suffix) == 0 else {
                throw StreamCacheError.storage(
                    "cannot move the damaged index aside:",
                    path: indexPath + suffix,
                    errno: errno
                )
            }
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? [] {
            unlink(dataDirectory + "/" + name)
        }
        return aside
    }

    /// Makes the cache's folders the user's alone (0700), as new ones are made: an existing
    /// directory others may read or write is tightened if it is a cache directory of this user,
    /// and refused otherwise (it may be `/tmp` or another user's).
    private func keepPrivate() throws {
        for folder in [path, dataDirectory] {
            var status = stat()
            guard lstat(folder, &status) == 0 else {
                throw StreamCacheError.storage("cannot inspect", path: folder, errno: errno)
            }
            guard (status.st_mode & S_IFMT) == S_IFDIR else {
                throw StreamCacheError(
                    .storage,
                    "\(folder) is not a directory (a link?); the cache needs a directory of its own"
                )
            }
            guard status.st_mode & 0o077 != 0 else { continue }
            let mode = String(status.st_mode & 0o777, radix: 8)
            guard status.st_uid == geteuid(), folder == dataDirectory || isCacheDirectory else {
                throw StreamCacheError(
                    .storage,
                    "cache directory \(folder) is open to other users (mode \(mode)) and not a cache of yours;"
                        + " use a directory of your own"
                )
            }
            guard chmod(folder, 0o700) == 0 else {
                throw StreamCacheError.storage("cannot make private (mode \(mode))", path: folder, errno: errno)
            }
        }
    }

    /// Whether the directory holds nothing but what a cache directory holds.
    private var isCacheDirectory: Bool {
        let known: Set<String> = ["data", "owners", "settings.json", "packages", "hls"]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.allSatisfy { known.contains($0) || $0.hasPrefix("index.sqlite") }
    }
}
