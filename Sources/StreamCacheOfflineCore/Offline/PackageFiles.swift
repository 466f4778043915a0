import Foundation
import StreamCache

/// The files of each package as `serve` looks them up, read from `asset.json` once and again
/// only when it changes: a manifest holds every file of the asset, so reading it per request
/// would cost more the longer the asset.
package final class PackageFiles: Sendable {
    /// What one package serves: its playlists and its origin files by path.
    package struct Entry: Sendable {
        package let modified: Date
        package let playlists: Set<String>
        package let items: [String: PackageItem]
    }

    private let entries = Locked<[String: Entry]>([:])

    /// The entry of the package in `folder` (asset `id`), `nil` if it has no readable manifest.
    package func entry(id: String, folder: String) -> Entry? {
        let manifestPath = folder + "/" + AssetManifest.fileName
        guard
            let modified = (try? FileManager.default.attributesOfItem(atPath: manifestPath))?[.modificationDate]
                as? Date
        else { return nil }
        if let known = entries.withLock({ $0[id] }), known.modified == modified { return known }
        guard let manifest = try? AssetManifest.load(from: folder) else { return nil }
        let entry = Entry(
            modified: modified,
            playlists: Set(manifest.playlists.keys),
            items: Dictionary(manifest.items.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        )
        entries.withLock { $0[id] = entry }
        return entry
    }
}
