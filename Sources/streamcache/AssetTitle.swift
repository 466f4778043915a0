import Foundation
import StreamCacheHLS

/// What a package is called where a person reads it (`hls ls`, `-o '%(title)s.%(ext)s'`): the
/// title it was given or its playlist gives, else the last element of its URL's path that is not
/// a generic name (`master.m3u8`, `index.m3u8`, `manifest.mpd`), without its extension.
enum AssetTitle {
    /// Names players and packagers give every stream's entry point.
    static let generic: Set<String> = ["master", "index", "main", "playlist", "manifest", "prog_index", "stream"]

    static func of(_ asset: OfflineAsset) -> String {
        if let title = asset.title, !title.isEmpty { return title }
        return fromURL(asset.url) ?? asset.id
    }

    static func fromURL(_ text: String) -> String? {
        guard let url = URL(string: text) else { return nil }
        let names = url.pathComponents.filter { $0 != "/" }.map { ($0 as NSString).deletingPathExtension }
        return names.reversed().first { !$0.isEmpty && !generic.contains($0.lowercased()) }
    }
}
