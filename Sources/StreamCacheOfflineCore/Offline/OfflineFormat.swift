import Foundation
import StreamCache

/// A manifest format the offline library downloads and records: which manifests are its, its
/// packages' entry point, its planner and its live recorder. Each format's module gives one
/// (`OfflineFormat.hls`, `OfflineFormat.dash`); a library is made with the formats it takes
/// (`StreamCacheOffline`'s library takes them all).
public struct OfflineFormat: Sendable {
    /// The entry point of the format's packages, relative to the package folder.
    package let entryPoint: String
    /// Whether a manifest the proxy's detector calls `kind` (`nil`: none said) is the format's.
    package let takes: @Sendable (ManifestKind?) -> Bool
    /// The planner of the format's packages for a download with `options`.
    package let planner: @Sendable (OfflineLibrary, CacheEngine, OfflineDownloadOptions) -> any PackagePlanner
    /// Records the live stream the manifest plans, reporting each step.
    package let record:
        @Sendable (
            AssetManifest, OfflineLibrary, CacheEngine, OfflineDownloadOptions,
            @escaping @Sendable (DownloadEvent) -> Void
        ) async throws -> Void
    /// The entry point's text for a package made before every package of the format had one;
    /// `nil` where none is made.
    package let rebuiltEntryPoint: @Sendable (AssetManifest) -> String?

    package init(
        entryPoint: String,
        takes: @escaping @Sendable (ManifestKind?) -> Bool,
        planner: @escaping @Sendable (OfflineLibrary, CacheEngine, OfflineDownloadOptions) -> any PackagePlanner,
        record:
            @escaping @Sendable (
                AssetManifest, OfflineLibrary, CacheEngine, OfflineDownloadOptions,
                @escaping @Sendable (DownloadEvent) -> Void
            ) async throws -> Void,
        rebuiltEntryPoint: @escaping @Sendable (AssetManifest) -> String? = { _ in nil }
    ) {
        self.entryPoint = entryPoint
        self.takes = takes
        self.planner = planner
        self.record = record
        self.rebuiltEntryPoint = rebuiltEntryPoint
    }
}
