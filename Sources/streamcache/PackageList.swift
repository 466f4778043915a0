import ArgumentParser
import Foundation
import StreamCacheOffline

extension StreamCacheCommand {
    /// `streamcache packages ls`: the offline library.
    struct PackageList: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List the offline assets: id, state, progress, size on disk, length, selection, title and path."
        )

        @Flag(name: .long, help: "Print a JSON array.")
        var json = false

        @OptionGroup var library: LibraryOptions

        func run() async throws {
            let assets = library.offlineLibrary.assets()
            if json {
                let data = try JSONSerialization.data(
                    withJSONObject: assets.map(PackageList.object),
                    options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                )
                StandardOutput.write(data + Data("\n".utf8))
                return
            }
            guard !assets.isEmpty else {
                print("no offline assets in \(library.offlineLibrary.directory)")
                return
            }
            var rows = [["ID", "STATE", "DONE", "SIZE", "LENGTH", "SELECTION", "TITLE", "PATH"]]
            var notes: [[String]] = [[]]
            for asset in assets {
                rows.append([
                    asset.id, asset.state.rawValue, String(format: "%.0f%%", asset.progress * 100),
                    ByteCount.format(asset.bytes), DownloadReporter.mediaDuration(asset.duration),
                    asset.selectionSummary, asset.displayTitle, asset.path,
                ])
                var lines: [String] = []
                if let failure = asset.failure { lines.append("failed: \(failure)") }
                if let recording = asset.recording { lines.append(Self.describe(recording)) }
                let alone = library.offlineLibrary.filesHeldAlone(asset.id)
                if asset.state == .complete, alone > 0 {
                    lines.append("\(alone) file(s) take disk space of their own (no copy shared with the cache)")
                }
                notes.append(lines)
            }
            for (row, lines) in zip(TextColumns.lines(rows), notes) {
                print(row)
                for line in lines { print("    " + line) }
            }
        }

        static func object(_ asset: OfflineAsset) -> [String: Any] {
            var object: [String: Any] = [
                "id": asset.id,
                "url": asset.url,
                "state": asset.state.rawValue,
                "progress": asset.progress,
                "bytes": asset.bytes,
                "duration": asset.duration,
                "audio": asset.audio,
                "subtitles": asset.subtitles,
                "path": asset.path,
                "created": asset.created,
                "playableOffline": asset.isPlayableOffline,
            ]
            object["variant"] = asset.variant.map(Self.object) ?? NSNull()
            if let failure = asset.failure { object["failure"] = failure }
            if let recording = asset.recording {
                object["recording"] = [
                    "lostSegments": recording.lostSegments,
                    "lostSeconds": recording.lostSeconds,
                    "ended": recording.ended.map { $0 as Any } ?? NSNull(),
                ]
            }
            return object
        }

        /// `recorded live (ended: duration), 2 segments lost (0:04)`.
        static func describe(_ recording: OfflineAsset.Recording) -> String {
            var line = "recorded live" + (recording.ended.map { " (ended: \($0))" } ?? "")
            if recording.lostSegments > 0 {
                line +=
                    ", \(recording.lostSegments) segment(s) lost"
                    + " (\(DownloadReporter.mediaDuration(recording.lostSeconds)))"
            } else {
                line += ", nothing lost"
            }
            return line
        }

        static func object(_ variant: OfflineAsset.VariantInfo) -> [String: Any] {
            [
                "bandwidth": variant.bandwidth,
                "resolution": variant.resolution.map { $0 as Any } ?? NSNull(),
                "codecs": variant.codecs.map { $0 as Any } ?? NSNull(),
            ]
        }
    }

    /// `streamcache packages rm`: delete offline assets.
    struct PackageRemove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Delete offline assets and free their disk."
        )

        @Argument(
            help: "Ids of the assets to delete, or their first 4 characters or more (see 'streamcache packages ls')."
        )
        var ids: [String] = []

        @Flag(name: .long, help: "Delete every asset.")
        var all = false

        @Flag(
            name: .long,
            help:
                "Leave the asset's files in the streaming cache (unpinned, within its budget) instead of deleting them."
        )
        var keepCached = false

        @OptionGroup var library: LibraryOptions

        func validate() throws {
            if all == ids.isEmpty { return }
            throw ValidationError(all ? "give either ids or --all, not both" : "give the ids to delete, or --all")
        }

        /// The streaming cache holds the files of a removed package that no other package lists,
        /// pinned (and shares those stored as sent with it): `urls` are deleted with it, or kept
        /// unpinned within the cache's budget.
        static func release(_ urls: [URL], keepCached: Bool, library: LibraryOptions) async throws {
            guard !urls.isEmpty, library.cache.directory.hasIndex else { return }
            try await library.cache.withEngine(evicts: false) { engine in
                for url in urls {
                    if keepCached {
                        _ = try? await engine.setPinned(false, url)
                    } else {
                        _ = try? await engine.remove(url)
                    }
                }
            }
        }

        func run() async throws {
            let offline = library.offlineLibrary
            let ids = all ? offline.assets().map(\.id) : ids
            var failures: [String] = []
            var released: [URL] = []
            for given in ids {
                do {
                    let id = try offline.id(named: given) ?? given
                    let urls = offline.urlsOnlyIn(id)
                    try offline.remove(id)
                    released += urls
                    print("removed \(id)")
                } catch {
                    failures.append(error.message)
                }
            }
            try await Self.release(released, keepCached: keepCached, library: library)
            if !failures.isEmpty { throw OfflineError(.unknownAsset, failures.joined(separator: "; ")) }
        }
    }
}
