import Foundation
import StreamCacheHLSModel
import StreamCacheOffline

/// A chapter of a media file or stream: its title and the part of the timeline it covers.
struct Chapter: Equatable, Sendable {
    let title: String
    let start: Double
    /// `nil`: to the end.
    let end: Double?

    var section: TimeSection { TimeSection(start: start, end: end) }
}

/// The chapters a file's header or a stream's chapter list holds, and the section a title names.
enum Chapters {
    /// The chapters ffprobe (beside `muxer`'s ffmpeg) finds in the media at `location`, reading
    /// its header only; none where it finds none or cannot read them.
    static func probe(_ location: String, with muxer: PackageMuxer) async -> [Chapter] {
        let output = await muxer.probe(["-v", "error", "-show_chapters", "-of", "json", location])
        return output.map { fromFFprobe(Data($0.utf8)) } ?? []
    }

    /// The chapters of ffprobe's `-show_chapters -of json`.
    static func fromFFprobe(_ json: Data) -> [Chapter] {
        struct Probed: Decodable {
            struct Entry: Decodable {
                let start_time: String
                let end_time: String?
                let tags: [String: String]?
            }
            let chapters: [Entry]?
        }
        guard let probed = try? JSONDecoder().decode(Probed.self, from: json) else { return [] }
        return (probed.chapters ?? []).compactMap { entry in
            guard let start = Double(entry.start_time), start.isFinite, start >= 0 else { return nil }
            let end = entry.end_time.flatMap(Double.init).flatMap { $0.isFinite && $0 > start ? $0 : nil }
            return Chapter(title: entry.tags?["title"] ?? "", start: start, end: end)
        }
    }

    /// The chapters of the stream at `url`: of an HLS multivariant playlist's chapter list;
    /// none for a media playlist, an MPD, or a playlist without one.
    ///
    /// - Throws: ``CommandFailure`` when the manifest or its chapter list cannot be fetched.
    static func ofStream(_ url: URL) async throws -> [Chapter] {
        let inspect = try StreamCacheCommand.ManifestInspect.parse([url.absoluteString])
        let (bytes, _) = try await inspect.load()
        guard case .multivariant(let playlist)? = try? Playlist(parsing: bytes, url: url.absoluteString),
            let uri = playlist.sessionData.first(where: { $0["DATA-ID"] == "com.apple.hls.chapters" })?["URI"],
            let list = URL(string: uri, relativeTo: url)?.absoluteURL
        else { return [] }
        do {
            return fromHLSChapterList(Data(try await inspect.fetch(list)))
        } catch {
            throw CommandFailure("cannot read the chapters of \(url.originName) at \(list.absoluteString): \(error)")
        }
    }

    /// The chapters of an HLS stream's chapter list (`EXT-X-SESSION-DATA` with `DATA-ID`
    /// `com.apple.hls.chapters`): a JSON array of objects with `start-time`, `duration` and
    /// `titles` (each a `title` and its `language`); the first title names a chapter.
    static func fromHLSChapterList(_ json: Data) -> [Chapter] {
        struct Entry: Decodable {
            struct Title: Decodable { let title: String? }
            let start: Double
            let duration: Double?
            let titles: [Title]?
            enum CodingKeys: String, CodingKey {
                case start = "start-time"
                case duration
                case titles
            }
        }
        guard let entries = try? JSONDecoder().decode([Entry].self, from: json) else { return [] }
        return entries.compactMap { entry in
            guard entry.start.isFinite, entry.start >= 0 else { return nil }
            let end = entry.duration.flatMap { $0.isFinite && $0 > 0 ? entry.start + $0 : nil }
            return Chapter(title: entry.titles?.compactMap(\.title).first ?? "", start: entry.start, end: end)
        }
    }

    /// The section of the chapter of `chapters` titled `title`, case aside.
    ///
    /// - Throws: ``CommandFailure`` (64) where no chapter, or more than one, has that title, or
    ///   `source` has no chapters: `title` is not a time either.
    static func section(titled title: String, in chapters: [Chapter], of source: String) throws -> TimeSection {
        let shown = String(title.prefix(60))
        guard !chapters.isEmpty else {
            throw CommandFailure(
                "'\(shown)' is neither a time range (START-END, such as 1:02:00-1:04:30) nor a chapter: \(source) has no chapters",
                status: ExitStatus.usage
            )
        }
        let matching = chapters.filter { $0.title.compare(title, options: .caseInsensitive) == .orderedSame }
        guard matching.count == 1, let chapter = matching.first else {
            let titles = chapters.prefix(20).map { "'\($0.title.prefix(40))'" }.joined(separator: ", ")
            throw CommandFailure(
                matching.isEmpty
                    ? "no chapter of \(source) is titled '\(shown)'; its chapters: \(titles)"
                    : "\(matching.count) chapters of \(source) are titled '\(shown)': give its times (START-END)",
                status: ExitStatus.usage
            )
        }
        return chapter.section
    }
}
