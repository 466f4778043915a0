import Foundation

/// Settings that belong to a cache directory, not to one command: stored in it
/// (`settings.json`) when set, used by every command on it until changed.
public struct CacheSettings: Codable, Sendable, Hashable {
    /// The default byte budget: 2 GiB.
    public static let defaultMaxSize: Int64 = 2 << 30

    /// The byte budget of the cache (`nil`: the default).
    public var maxSize: Int64?
    /// Hosts whose `no-store` responses are stored all the same (`*`: every host); `nil`: none.
    public var ignoreNoStore: [String]?
    /// Serve stale copies with the origin unreachable even when they say `must-revalidate` or
    /// `no-cache`.
    public var serveStaleAlways: Bool?
    /// Query parameters left out of cache keys, as written (``CacheKeyRules/parseRule(_:)``).
    public var keyIgnoreQuery: [String]?
    /// The share of the budget bytes only a prefetch brought may take, 0 to 1 (`nil`: 10%).
    public var prefetchShare: Double?

    public init(maxSize: Int64? = nil) {
        self.maxSize = maxSize
    }

    /// Whether `no-store` responses from `url` are stored (``ignoreNoStore``).
    public func storesNoStore(_ url: URL) -> Bool {
        guard let hosts = ignoreNoStore else { return false }
        return hosts.contains("*")
            || url.host.map { host in hosts.contains { $0.lowercased() == host.lowercased() } }
                ?? false
    }

    /// Applies the settings that shape caching rules to `configuration`.
    public func apply(to configuration: inout CacheConfiguration) {
        let settings = self
        configuration.storesNoStore = { settings.storesNoStore($0) }
        configuration.servesStaleAlways = serveStaleAlways ?? false
        configuration.keyRules = keyRules
        if let prefetchShare { configuration.prefetchShare = min(max(prefetchShare, 0), 1) }
    }

    /// The rules of ``keyIgnoreQuery`` (checked when the settings are loaded).
    public var keyRules: CacheKeyRules {
        (try? CacheKeyRules(parsing: keyIgnoreQuery ?? [])) ?? CacheKeyRules()
    }

    /// The budget in force.
    public var effectiveMaxSize: Int64 { maxSize ?? Self.defaultMaxSize }

    /// The settings stored in `directory`, or the defaults if none are.
    ///
    /// - Throws: ``StreamCacheError`` `storage` if the file exists but cannot be read.
    public static func load(from directory: CacheDirectory) throws -> CacheSettings {
        guard let data = FileManager.default.contents(atPath: directory.settingsPath) else { return CacheSettings() }
        let settings: CacheSettings
        do {
            settings = try JSONDecoder().decode(CacheSettings.self, from: data)
        } catch {
            throw StreamCacheError(.storage, "cannot read \(directory.settingsPath): not valid settings")
        }
        do {
            _ = try CacheKeyRules(parsing: settings.keyIgnoreQuery ?? [])
        } catch {
            throw StreamCacheError(.storage, "cannot read \(directory.settingsPath): \(error.description)")
        }
        return settings
    }

    /// Stores the settings in `directory` (0600, replaced atomically).
    ///
    /// - Throws: ``StreamCacheError`` `storage` if they cannot be written.
    public func save(to directory: CacheDirectory) throws {
        try directory.prepare()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let temporary = directory.settingsPath + ".\(getpid()).partial"
        let data = try encoder.encode(self)
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]),
            rename(temporary, directory.settingsPath) == 0
        else {
            unlink(temporary)
            throw StreamCacheError(
                .storage,
                "cannot write \(directory.settingsPath): \(String(cString: strerror(errno)))"
            )
        }
    }
}
