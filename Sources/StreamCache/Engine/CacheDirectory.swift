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

    /// The default directory: `$STREAMCACHE_DIR`, else `$XDG_CACHE_HOME/streamcache`,
    /// else `~/.cache/streamcache`.
    public static func `default`(environment: [String: String] = ProcessInfo.processInfo.environment) -> CacheDirectory
    {
        if let dir = environment["STREAMCACHE_DIR"], !dir.isEmpty { return CacheDirectory(path: dir) }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return CacheDirectory(path: xdg + "/streamcache") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return CacheDirectory(path: home + "/.cache/streamcache")
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
        do {
            var missing: [String] = []
            var folder = dataDirectory
            while !folder.isEmpty, folder != "/", !FileManager.default.fileExists(atPath: folder) {
                missing.append(folder)
                folder = (folder as NSString).deletingLastPathComponent
            }
            for folder in missing.reversed() {
                do {
                    try FileManager.default.createDirectory(
                        atPath: folder,
                        withIntermediateDirectories: false,
                        attributes: [.posixPermissions: 0o700]
                    )
                } catch {
                    // Another process sharing the directory made it first.
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory),
                        isDirectory.boolValue
                    else { throw error }
                }
            }
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw StreamCacheError(.storage, "cannot create cache directory \(path): \(reason)")
        }
        guard access(path, W_OK) == 0, access(dataDirectory, W_OK) == 0 else {
            throw StreamCacheError(.storage, "cache directory \(path) is not writable")
        }
    }
}
