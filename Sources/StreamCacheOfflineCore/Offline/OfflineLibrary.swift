import Foundation
import StreamCache

/// The offline library: a folder holding one package folder per asset (the model of
/// AVAssetDownloadURLSession). Downloads start and resume here; assets are listed and deleted
/// here.
///
/// A package is a plain folder: its format's entry point (`master.m3u8`, `manifest.mpd`) of only
/// the chosen tracks, one folder per track with its segments, init sections and keys (readable
/// by the owner only), every URI a relative local path, and `asset.json`, the library's record.
/// The formats a library takes are given when it is made (``OfflineFormat``).
public struct OfflineLibrary: Sendable {
    /// The library folder.
    public let directory: String
    /// The packages' files, for ``source(id:path:)``.
    private let files = PackageFiles()
    /// The manifest formats it downloads and records.
    package let formats: [OfflineFormat]

    /// The library in `directory`, of packages of `formats`.
    public init(directory: String, formats: [OfflineFormat]) {
        self.directory = (directory as NSString).standardizingPath
        self.formats = formats
    }

    /// The library of a cache directory: its `packages` folder. One made before under its
    /// older name, `hls`, is moved there the first time (or used where it is if it cannot be).
    public init(cache: CacheDirectory, formats: [OfflineFormat]) {
        let path = cache.path + "/packages"
        self.init(directory: Self.moving(from: [cache.path + "/hls"], to: path).directory, formats: formats)
    }

    /// The user's library, where XDG puts data a user keeps (cache cleaners leave it alone):
    /// `$STREAMCACHE_LIBRARY`, else `$XDG_DATA_HOME/streamcache/packages`, else in an app
    /// `StreamCache/packages` in its Application Support directory (kept when the system purges
    /// Caches; an app may exclude it from backups), else `~/.local/share/streamcache/packages`.
    ///
    /// A library made before beside it under its older name (`hls`), or in the cache
    /// directory's `hls` folder, is moved there the first time, or, if it cannot be moved
    /// (another filesystem), still used where it is.
    ///
    /// - Parameter platformSupport: the app's Application Support directory (the default: the
    ///   container's in an app, none elsewhere).
    /// - Returns: the library, and one line for the user if it was moved.
    public static func userDefault(
        cache: CacheDirectory,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        platformSupport: String? = AppContainer.directory(for: .applicationSupportDirectory),
        formats: [OfflineFormat]
    ) -> (library: OfflineLibrary, note: String?) {
        if let library = environment["STREAMCACHE_LIBRARY"], !library.isEmpty {
            return (OfflineLibrary(directory: library, formats: formats), nil)
        }
        let folder: String
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            folder = data + "/streamcache"
        } else if let platformSupport {
            folder = platformSupport + "/StreamCache"
        } else {
            folder = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/streamcache"
        }
        let (path, note) = moving(from: [folder + "/hls", cache.path + "/hls"], to: folder + "/packages")
        return (OfflineLibrary(directory: path, formats: formats), note)
    }

    /// The library folder to use for `path`: `path` itself, after the first of `olds` that
    /// exists is moved there if `path` does not exist yet (with one line for the user); that
    /// old folder if it cannot be moved.
    private static func moving(from olds: [String], to path: String) -> (directory: String, note: String?) {
        let manager = FileManager.default
        let standard = (path as NSString).standardizingPath
        guard !manager.fileExists(atPath: path),
            let old = olds.first(where: {
                ($0 as NSString).standardizingPath != standard && manager.fileExists(atPath: $0)
            })
        else { return (path, nil) }
        _ = PrivateFolders.create(LocalPath.folder(of: path))
        guard rename(old, path) == 0 else { return (old, nil) }
        return (path, "moved the offline library from \(old) to \(path)")
    }

    /// Downloads the asset at `url` (a multivariant or media playlist), or resumes it if the
    /// library has it with the same selection.
    ///
    /// The download runs while the sequence is iterated and stops (resumable) when iteration
    /// stops. Its last event is `finished` or `failed`, except for a dry run.
    ///
    /// - Parameters:
    ///   - url: the playlist URL.
    ///   - criteria: which variant and renditions.
    ///   - options: jobs, retries, dry run, headers.
    ///   - engine: the streaming cache: its bytes are used, and origins reached under its rules.
    public func download(
        _ url: URL,
        criteria: MediaSelectionCriteria = MediaSelectionCriteria(),
        options: OfflineDownloadOptions = OfflineDownloadOptions(),
        engine: CacheEngine
    ) -> AsyncStream<DownloadEvent> {
        events(.url(url, criteria), options: options, engine: engine)
    }

    /// Resumes the asset `id` with the plan it began with (AVAssetDownloadURLSession's
    /// `getAllTasks` after a relaunch).
    public func resume(
        id: String,
        options: OfflineDownloadOptions = OfflineDownloadOptions(),
        engine: CacheEngine
    ) -> AsyncStream<DownloadEvent> {
        events(.asset(id: id), options: options, engine: engine)
    }

    /// Adds renditions to the asset `id`: another audio language, subtitles, of the variant it
    /// has, without fetching its files again (an `AVAggregateAssetDownloadTask` with more media
    /// selections). Renditions the asset has are kept; the asset is `downloading` until the new
    /// ones are on disk, and plays meanwhile through the in-app server, which reads the missing
    /// files from the cache.
    ///
    /// - Parameters:
    ///   - audio: the audio renditions to add (`.only(["de"])`); `.none` adds none.
    ///   - subtitles: the subtitle renditions to add.
    /// - Returns: the events of the download, as ``download(_:criteria:options:engine:)``'s; it
    ///   fails with `unknownAsset`, `noMatchingRendition` (naming the languages there are) or
    ///   `manifest` (the origin no longer lists the asset's variant or representations).
    public func addMediaSelection(
        to id: String,
        audio: MediaSelectionCriteria.Languages = .none,
        subtitles: MediaSelectionCriteria.Languages = .none,
        options: OfflineDownloadOptions = OfflineDownloadOptions(),
        engine: CacheEngine
    ) -> AsyncStream<DownloadEvent> {
        events(.addition(id: id, audio: audio, subtitles: subtitles), options: options, engine: engine)
    }

    private func events(
        _ target: AssetDownloader.Target,
        options: OfflineDownloadOptions,
        engine: CacheEngine
    ) -> AsyncStream<DownloadEvent> {
        AsyncStream { continuation in
            let downloader = AssetDownloader(library: self, engine: engine, options: options) { event in
                continuation.yield(event)
            }
            let task = Task {
                await downloader.run(target)
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Every asset, oldest first.
    public func assets() -> [OfflineAsset] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter(AssetID.isValid).compactMap { asset($0) }.sorted { $0.created < $1.created }
    }

    /// The id of the asset `text` names: its id, or a prefix of 4 characters or more that one
    /// asset's id starts with; `nil` when none does.
    ///
    /// - Throws: ``OfflineError`` `unknownAsset` naming each asset a prefix matches, when it
    ///   matches more than one.
    public func id(named text: String) throws(OfflineError) -> String? {
        let text = text.lowercased()
        if AssetID.isValid(text) { return asset(text) == nil ? nil : text }
        guard text.count >= AssetID.shortestPrefix, text.allSatisfy(\.isHexDigit) else { return nil }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let matches = names.filter { AssetID.isValid($0) && $0.hasPrefix(text) && asset($0) != nil }.sorted()
        guard matches.count <= 1 else {
            throw OfflineError(
                .unknownAsset,
                "\(text) names \(matches.count) assets (\(matches.joined(separator: ", "))): give more of the id"
            )
        }
        return matches.first
    }

    /// The assets whose download has not finished, to resume.
    public func unfinished() -> [OfflineAsset] {
        assets().filter { $0.state != .complete }
    }

    /// The asset `id`, if the library has it.
    /// The one file the download of asset `id` was asked to write when it ends (`-o`), kept so
    /// that a resume by id writes it too; `nil` if none was.
    public func outputFile(of id: String) -> String? {
        guard AssetID.isValid(id) else { return nil }
        return (try? AssetManifest.load(from: folder(id)))?.outputFile
    }

    public func asset(_ id: String) -> OfflineAsset? {
        guard AssetID.isValid(id), let manifest = try? AssetManifest.load(from: folder(id)) else { return nil }
        let folder = folder(id)
        let schedule = DownloadSchedule(
            items: manifest.items,
            done: manifest.items.map { FileManager.default.fileExists(atPath: folder + "/" + $0.path) },
            runLimit: 0
        )
        let state: OfflineAsset.State =
            switch manifest.state {
            case .complete: .complete
            case .failed: PackageLock.isHeld(folder: folder) ? .downloading : .failed
            case .downloading: PackageLock.isHeld(folder: folder) ? .downloading : .incomplete
            }
        return OfflineAsset(
            id: id,
            url: manifest.url,
            state: state,
            progress: schedule.fraction,
            bytes: Self.diskUsage(of: folder),
            duration: manifest.duration,
            variant: manifest.variant,
            audio: manifest.audio,
            subtitles: manifest.subtitles,
            path: folder + "/" + manifest.entryPoint,
            created: ISO8601DateFormatter().string(from: manifest.created),
            failure: manifest.state == .failed ? manifest.failure : nil,
            title: manifest.title,
            artworkPath: FileManager.default.fileExists(atPath: folder + "/" + AssetManifest.artworkFileName)
                ? folder + "/" + AssetManifest.artworkFileName : nil,
            recording: manifest.recording.map { recording in
                OfflineAsset.Recording(
                    lostSegments: recording.tracks.map(\.lostSegments).reduce(0, +),
                    lostSeconds: recording.tracks.first?.lostSeconds ?? 0,
                    ended: recording.ended
                )
            },
            sections: manifest.sections?.sections.map(\.description)
        )
    }

    /// Keeps `title` and `artwork` with the asset `id` (`nil` leaves each as it is), as an app's
    /// downloads list shows them.
    ///
    /// - Throws: ``OfflineError`` `unknownAsset`, `busy` while a download of it runs, `storage`.
    public func describe(_ id: String, title: String?, artwork: Data?) throws(OfflineError) {
        let folder = folder(id)
        guard AssetID.isValid(id), var manifest = try? AssetManifest.load(from: folder) else {
            throw OfflineError(.unknownAsset, "no asset \(id) in \(directory)")
        }
        guard let lock = try PackageLock(folder: folder) else {
            throw OfflineError(.busy, "asset \(id) is being downloaded; describe it when that download ends")
        }
        defer { withExtendedLifetime(lock) {} }
        if let artwork { try writeArtwork(artwork, id: id) }
        if let title {
            manifest.title = title
            do {
                try manifest.save(in: folder)
            } catch {
                throw (error as? OfflineError)
                    ?? OfflineError(.storage, "cannot write the record of \(folder): \(error)")
            }
        }
    }

    /// Writes `artwork` into the package of `id`, durably.
    package func writeArtwork(_ artwork: Data, id: String) throws(OfflineError) {
        let path = folder(id) + "/" + AssetManifest.artworkFileName
        do {
            try PackageFile.writeAtomically(artwork, to: path)
        } catch {
            throw (error as? OfflineError) ?? OfflineError(.storage, "cannot write \(path): \(error)")
        }
    }

    /// Resumes every download that has not finished (AVAssetDownloadURLSession's
    /// `getAllTasks` at launch, the seed's `restorePendingDownloads`): call it once when the app
    /// starts, and iterate each stream to run its download.
    ///
    /// - Returns: each unfinished asset's id and its events.
    public func restorePendingDownloads(
        options: OfflineDownloadOptions = OfflineDownloadOptions(),
        engine: CacheEngine
    ) -> [(id: String, events: AsyncStream<DownloadEvent>)] {
        unfinished().filter { $0.state != .downloading }.map { asset in
            (asset.id, resume(id: asset.id, options: options, engine: engine))
        }
    }

    /// The origin URLs asset `id` is made of that no other asset of the library uses: what the
    /// streaming cache may stop keeping pinned once the asset is removed.
    public func urlsOnlyIn(_ id: String) -> [URL] {
        guard AssetID.isValid(id), let manifest = try? AssetManifest.load(from: folder(id)) else { return [] }
        var others = Set<String>()
        for asset in assets() where asset.id != id {
            if let other = try? AssetManifest.load(from: folder(asset.id)) { others.formUnion(other.originURLs) }
        }
        return manifest.originURLs.subtracting(others).sorted().compactMap(URL.init(string:))
    }

    /// How many of asset `id`'s files stored as the origin sent them the package holds alone:
    /// not one file with the cache's copy (another file system, or the cache let it go).
    public func filesHeldAlone(_ id: String) -> Int {
        guard AssetID.isValid(id), let manifest = try? AssetManifest.load(from: folder(id)) else { return 0 }
        var count = 0
        for item in manifest.items where item.offset == nil && item.decryption == nil {
            var info = stat()
            if lstat(folder(id) + "/" + item.path, &info) == 0, info.st_nlink == 1 { count += 1 }
        }
        return count
    }

    /// Deletes the asset `id`: its package and its record, freeing its disk.
    ///
    /// - Throws: ``OfflineError`` `unknownAsset`, or `busy` while a download of it runs.
    public func remove(_ id: String) throws(OfflineError) {
        let folder = folder(id)
        guard AssetID.isValid(id), FileManager.default.fileExists(atPath: folder + "/" + AssetManifest.fileName)
        else {
            throw OfflineError(.unknownAsset, "no asset \(id) in \(directory)")
        }
        guard !PackageLock.isHeld(folder: folder) else {
            throw OfflineError(.busy, "asset \(id) is being downloaded; stop that download first")
        }
        // Renamed first, so a package is either whole in the library or gone from it.
        let doomed = directory + "/.removing-" + id
        try? FileManager.default.removeItem(atPath: doomed)
        guard rename(folder, doomed) == 0 else { throw PackageFile.failure("cannot remove", folder) }
        try? FileManager.default.removeItem(atPath: doomed)
    }

    /// Where a file of asset `id` comes from, for a player asking for `path` (relative to the
    /// package): the package file when it is on disk, else the origin bytes it will hold.
    /// `nil` for a path the package does not have.
    public func source(id: String, path: String) -> OfflineFileSource? {
        guard AssetID.isValid(id), let package = files.entry(id: id, folder: folder(id)) else { return nil }
        let file = folder(id) + "/" + path
        if package.playlists.contains(path) {
            return .file(file)
        }
        if let format = formats.first(where: { $0.entryPoint == path }) {
            // A package made before every package of its format had this entry point gets one, once.
            if FileManager.default.fileExists(atPath: file) { return .file(file) }
            if let manifest = try? AssetManifest.load(from: folder(id)), let text = format.rebuiltEntryPoint(manifest) {
                if (try? PackageFile.writeAtomically(Data(text.utf8), to: file)) != nil { return .file(file) }
            }
        }
        guard let item = package.items[path], let url = URL(string: item.url) else { return nil }
        if FileManager.default.fileExists(atPath: file) { return .file(file) }
        return .origin(url: url, offset: item.offset ?? 0, length: item.length)
    }

    // MARK: - The package folder

    package func folder(_ id: String) -> String { directory + "/" + id }

    /// The manifest of the asset `id` names under the cache keys `keyOf` gives now: its own, or
    /// that of an asset made before a key rule changed those keys (`hls download URL?token=a`,
    /// then `config --key-ignore-query token`: `URL?token=b` is that asset), whose id, made
    /// anew from its URLs, is `id`. A rule applies to what was stored before it.
    package func manifest(identifiedAs id: String, keyOf: (URL) -> String) -> AssetManifest? {
        if let manifest = try? AssetManifest.load(from: folder(id)) { return manifest }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where AssetID.isValid(name) && name != id {
            guard let manifest = try? AssetManifest.load(from: folder(name)), let url = URL(string: manifest.url)
            else { continue }
            let playlists =
                manifest.selectionIDs
                ?? (manifest.sourcePlaylists ?? [manifest.url]).dropFirst().compactMap { URL(string: $0).map(keyOf) }
            let sections = manifest.sections?.identity ?? []
            if AssetID.make(key: keyOf(url), playlists: playlists + sections) == id { return manifest }
        }
        return nil
    }

    /// Creates the library folder if needed (the user's alone, 0700), and checks that it can hold
    /// packages: a folder of this user's that no one else can write. Its packages hold URLs
    /// with tokens and keys, so a folder of this user's that others can read is made private.
    package func prepare() throws(OfflineError) {
        _ = PrivateFolders.create(directory)
        var status = stat()
        guard stat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, access(directory, W_OK) == 0
        else {
            throw OfflineError(
                .storage,
                "cannot use \(directory) as the offline library: not a folder this user can write"
            )
        }
        let mode = String(status.st_mode & 0o777, radix: 8)
        guard status.st_uid == geteuid(), status.st_mode & 0o022 == 0 else {
            throw OfflineError(
                .storage,
                "cannot use \(directory) as the offline library: other users can write it (mode \(mode));"
                    + " use a folder of your own"
            )
        }
        if status.st_mode & 0o077 != 0, chmod(directory, 0o700) != 0 {
            throw OfflineError(.storage, "cannot make the offline library \(directory) private (mode \(mode))")
        }
    }

    package func createFolders(for manifest: AssetManifest) throws(OfflineError) {
        for rendition in manifest.renditions {
            let path = folder(manifest.id) + "/" + rendition.folder
            if let (_, code) = PrivateFolders.create(path) {
                throw OfflineError(
                    .storage,
                    "cannot create the package folder \(path): \(String(cString: strerror(code)))"
                )
            }
        }
    }

    /// Writes the playlists (so the asset plays while it downloads), then the manifest.
    package func writePlaylistsAndManifest(_ manifest: AssetManifest) throws {
        let folder = folder(manifest.id)
        for (path, text) in manifest.playlists {
            try PackageFile.writeAtomically(Data(text.utf8), to: folder + "/" + path)
        }
        try manifest.save(in: folder)
    }

    package func removePartialFiles(of manifest: AssetManifest) {
        for item in manifest.items { unlink(folder(manifest.id) + "/" + item.path + ".partial") }
    }

    private static func diskUsage(of folder: String) -> Int64 {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return 0 }
        var total: Int64 = 0
        while let name = walker.nextObject() as? String {
            let size = (walker.fileAttributes?[.size] as? NSNumber)?.int64Value ?? 0
            if walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular { total += size }
            _ = name
        }
        return total
    }
}

/// Where a file a player asks for in an offline package comes from.
public enum OfflineFileSource: Sendable, Hashable {
    /// The file on disk.
    case file(String)
    /// Not on disk yet: these bytes of the origin (`length == nil`: all of it).
    case origin(url: URL, offset: Int64, length: Int64?)
}
