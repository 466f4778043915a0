import ArgumentParser
import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheOffline
import StreamCacheHTTP

extension StreamCacheCommand {
    /// `streamcache packages inspect`: what an HLS playlist or a DASH MPD holds.
    struct ManifestInspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "inspect",
            abstract: "Summarise an HLS playlist or a DASH MPD: variants, renditions or representations, segments.",
            discussion: "Reads one playlist or MPD (it does not follow variant URIs). --json prints one JSON document."
        )

        /// Playlists larger than this are refused rather than read.
        static let maximumSize = ManifestKind.largestDocument

        @Argument(help: "An http(s) URL or a local file.")
        var source: String

        @Flag(name: .long, help: "Print one JSON document instead of text.")
        var json = false

        func run() async throws {
            let (bytes, kind) = try await load()
            if kind == .dash { return try describeMPD(bytes) }
            let playlist: Playlist
            do {
                playlist = try Playlist(parsing: bytes, url: source)
            } catch {
                throw CommandFailure("invalid playlist \(source): \(error)")
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                let data = try encoder.encode(PlaylistSummary(playlist))
                StandardOutput.write(data + Data("\n".utf8))
            } else {
                print(PlaylistDescription.text(of: playlist), terminator: "")
            }
        }

        private func describeMPD(_ bytes: [UInt8]) throws {
            let presentation: MediaPresentation
            do {
                presentation = try MediaPresentation(parsing: bytes)
            } catch {
                throw CommandFailure("invalid MPD \(source): \(error)")
            }
            let url = URL(string: source).flatMap { $0.scheme == nil ? nil : $0 } ?? URL(fileURLWithPath: source)
            if json {
                let data = try JSONSerialization.data(
                    withJSONObject: DASHDescription.json(of: presentation, url: url),
                    options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                )
                StandardOutput.write(data + Data("\n".utf8))
            } else {
                print(DASHDescription.text(of: presentation, url: url), terminator: "")
            }
        }

        /// The manifest's bytes, from the origin or a file, and its kind as `serve` and
        /// `download` tell it (``ManifestKind``: the media type, the bytes, the path); `nil`
        /// when nothing says, which is read as a playlist.
        func load() async throws -> (bytes: [UInt8], kind: ManifestKind?) {
            let lowered = source.lowercased()
            if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
                let url = try URLArgument.parse(source)
                let (bytes, contentType) = try await fetchWithType(url)
                return (bytes, ManifestKind.of(url: url, contentType: contentType, firstBytes: bytes))
            }
            if let colon = source.firstIndex(of: ":"), source[..<colon].count > 1,
                source[..<colon].allSatisfy(\.isLetter)
            {
                throw StreamCacheError(.unsupportedScheme, "only http(s) URLs and local files: \(source)")
            }
            guard let handle = FileHandle(forReadingAtPath: source) else {
                throw StreamCacheError(.storage, "cannot read \(source)")
            }
            defer { try? handle.close() }
            let data = try handle.read(upToCount: Self.maximumSize + 1) ?? Data()
            guard data.count <= Self.maximumSize else {
                throw StreamCacheError(.storage, "\(source) is larger than 16 MiB: not a playlist")
            }
            let bytes = [UInt8](data)
            return (bytes, ManifestKind.of(url: URL(fileURLWithPath: source), contentType: nil, firstBytes: bytes))
        }

        func fetch(_ url: URL) async throws -> [UInt8] {
            try await fetchWithType(url).bytes
        }

        /// The bytes at `url` and their `Content-Type`.
        func fetchWithType(_ url: URL) async throws -> (bytes: [UInt8], contentType: String?) {
            let client = HTTPOriginClient()
            do {
                let data = try await client.fetch(OriginRequest(url: url)) { head, body in
                    guard (200..<300).contains(head.status) else {
                        throw StreamCacheError(.originStatus, "\(url) answered \(head.status)", status: head.status)
                    }
                    var data = [UInt8]()
                    for try await chunk in body {
                        data += chunk
                        guard data.count <= Self.maximumSize else {
                            throw StreamCacheError(
                                .originProtocolViolation,
                                "\(url) is larger than 16 MiB: not a playlist"
                            )
                        }
                    }
                    return (data, head["Content-Type"])
                }
                try? await client.shutdown()
                return data
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }
}

/// The text summary of `packages inspect`.
enum PlaylistDescription {
    static func text(of playlist: Playlist) -> String {
        switch playlist {
        case .multivariant(let playlist): multivariant(playlist)
        case .media(let playlist): media(playlist)
        }
    }

    private static func multivariant(_ playlist: MultivariantPlaylist) -> String {
        var lines = ["multivariant playlist" + (playlist.header.version.map { ", version \($0)" } ?? "")]
        lines.append("variants: \(playlist.variants.count)")
        for variant in playlist.variants.sorted(by: { $0.bandwidth > $1.bandwidth }) {
            var parts = ["\(bitrate(variant.bandwidth))"]
            if let resolution = variant.resolution { parts.append("\(resolution)") }
            if let frameRate = variant.frameRate { parts.append("\(frameRate) fps") }
            if let codecs = variant.codecs { parts.append(codecs) }
            for (name, group) in [("audio", variant.audio), ("video", variant.video), ("subtitles", variant.subtitles)]
            {
                if let group { parts.append("\(name)=\(group)") }
            }
            lines.append("  " + parts.joined(separator: "  ") + "  " + variant.uri)
        }
        if !playlist.renditions.isEmpty {
            lines.append("renditions: \(playlist.renditions.count)")
            for rendition in playlist.renditions {
                var parts = [rendition.type, "group=\(rendition.groupId)", "\"\(rendition.name)\""]
                if let language = rendition.language { parts.append(language) }
                if rendition.isDefault { parts.append("default") }
                if rendition.autoselect { parts.append("autoselect") }
                if rendition.forced { parts.append("forced") }
                lines.append("  " + parts.joined(separator: "  ") + "  " + (rendition.uri ?? "(in the variant stream)"))
            }
        }
        if !playlist.iframeVariants.isEmpty {
            lines.append("i-frame variants: \(playlist.iframeVariants.count)")
            for variant in playlist.iframeVariants {
                lines.append("  \(variant.bandwidth.map(bitrate) ?? "bandwidth unknown")  \(variant.uri)")
            }
        }
        if !playlist.sessionKeys.isEmpty {
            lines.append("session keys: " + playlist.sessionKeys.map(\.method).joined(separator: ", "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func media(_ playlist: MediaPlaylist) -> String {
        var kind = ["media playlist"]
        if let version = playlist.header.version { kind.append("version \(version)") }
        if let type = playlist.playlistType { kind.append(type) }
        kind.append(playlist.endList ? "complete" : "live (no EXT-X-ENDLIST)")
        if playlist.iFramesOnly { kind.append("I-frames only") }
        var lines = [kind.joined(separator: ", ")]
        let segments = playlist.segments
        lines.append(
            "segments: \(segments.count), total \(String(format: "%.3f", playlist.totalDuration)) s"
                + (playlist.targetDuration.map { ", target duration \($0) s" } ?? "")
                + ", media sequence \(playlist.mediaSequence)"
        )
        let encrypted = segments.filter { $0.key != nil }
        if let key = encrypted.first?.key {
            lines.append("encryption: \(key.method) on \(encrypted.count) of \(segments.count) segments")
        } else {
            lines.append("encryption: none")
        }
        var maps: [String] = []
        for segment in segments { if let map = segment.map?.uri, !maps.contains(map) { maps.append(map) } }
        lines.append("init sections: " + (maps.isEmpty ? "none" : maps.joined(separator: ", ")))
        let ranged = segments.filter { $0.byteRange != nil }.count
        if ranged > 0 { lines.append("byte-range segments: \(ranged)") }
        let discontinuities = segments.filter(\.discontinuity).count
        if discontinuities > 0 { lines.append("discontinuities: \(discontinuities)") }
        let gaps = segments.filter(\.gap).count
        if gaps > 0 { lines.append("gaps: \(gaps)") }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func bitrate(_ bandwidth: Int64) -> String { Bitrate.text(bandwidth) }
}
