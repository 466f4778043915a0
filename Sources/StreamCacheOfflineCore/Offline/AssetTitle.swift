import Foundation
import StreamCacheMediaModel

extension OfflineAsset {
    /// Names players and packagers give every stream's entry point.
    package static let genericNames: Set<String> = [
        "master", "index", "main", "playlist", "manifest", "prog_index", "stream",
    ]

    /// What the package is called where a person reads it (`hls ls`, `serve`'s page, `-o
    /// '%(title)s.%(ext)s'`): its title (given, or from its playlist), else the last element of
    /// its URL's path that is not a generic name (`master.m3u8`, `index.m3u8`, `manifest.mpd`),
    /// without its extension; else its id.
    public var displayTitle: String {
        if let title, !title.isEmpty { return title }
        return Self.title(fromURL: url) ?? id
    }

    /// What was chosen, where a person reads it: `320x240 403 kbit/s, audio en,de, subtitles en`
    /// (`hls ls`, `serve`'s page: packages titled alike are told apart by it and their ids).
    public var selectionSummary: String {
        var parts: [String] = []
        if let variant {
            let size = [variant.resolution, Bitrate.text(variant.bandwidth)].compactMap { $0 }
            parts.append(size.joined(separator: " "))
        }
        if !audio.isEmpty { parts.append("audio " + audio.joined(separator: ",")) }
        if !subtitles.isEmpty { parts.append("subtitles " + subtitles.joined(separator: ",")) }
        return parts.joined(separator: ", ")
    }

    package static func title(fromURL text: String) -> String? {
        guard let url = URL(string: text) else { return nil }
        let names = url.pathComponents.filter { $0 != "/" }.map { ($0 as NSString).deletingPathExtension }
        return names.reversed().first { !$0.isEmpty && !genericNames.contains($0.lowercased()) }
    }
}
