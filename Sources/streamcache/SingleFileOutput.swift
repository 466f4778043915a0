import ArgumentParser
import Foundation
import StreamCache
import StreamCacheOffline

/// `-o FILE` of `download` and `export ID FILE`: a finished package written as one file by
/// ``PackageMuxer``, its name from an ``OutputTemplate``.
struct SingleFileOutput {
    let template: OutputTemplate
    let muxer: PackageMuxer
    /// Replace a file that is there.
    let force: Bool
    /// Show the ffmpeg command.
    let verbose: Bool
    /// Say nothing but errors.
    let silent: Bool
    /// Write the audio alone (`download -x`).
    var audioOnly = false
    /// Write this time section of the package alone (`export ID FILE --section`).
    var section: TimeSection?
    /// Cut a section at its exact frames (``SectionCut/exact``).
    var exact = false

    /// Checks what can be checked before any download: the template, ffmpeg on `PATH`, and the
    /// folder the template names (when no field is in it).
    ///
    /// - Throws: ``CommandFailure`` (64 for the template, 1 without ffmpeg), ``OutputError``
    ///   for a folder that is not there.
    init(_ text: String, argument: String = "-o", force: Bool, verbose: Bool, silent: Bool = false) throws {
        template = try OutputTemplate(text, argument: argument)
        muxer = try PackageMuxer.find()
        self.force = force
        self.verbose = verbose
        self.silent = silent
        let folder = LocalPath.folder(of: text)
        if !text.contains("%(") {
            // A name with no field is the file itself: its folder, a folder under its name, or a
            // file there, is said now.
            try Self.check(text, force: force)
        } else if !folder.contains("%(") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue
            else { throw OutputError("cannot write \(text): folder \(folder) does not exist") }
        }
    }

    /// Whether `path` can be written: not a folder, in a folder that is there, and not a file
    /// that is there unless `force`.
    ///
    /// - Throws: ``OutputError`` saying which.
    private static func check(_ path: String, force: Bool) throws {
        try OutputFile.check(path)
        if !force, FileManager.default.fileExists(atPath: path) {
            throw OutputError("\(path) exists; --force replaces it")
        }
    }

    /// Writes `asset` (complete) to the file the template names for it; returns its path.
    ///
    /// - Throws: ``OutputError`` for a file that is there (without `force`), a folder, a
    ///   missing folder; ``CommandFailure`` when ffmpeg fails (the package is kept).
    @discardableResult
    func write(_ asset: OfflineAsset) async throws -> String {
        var hasVideo = audioOnly ? false : Self.hasVideo(asset)
        if hasVideo == nil { hasVideo = await muxer.streamKinds(of: asset.path)?.contains("video") ?? true }
        let path = template.path(
            OutputTemplate.Values(
                title: asset.displayTitle,
                id: asset.id,
                height: asset.variant?.resolution?.split(separator: "x").last.flatMap { Int($0) },
                hasVideo: hasVideo ?? true,
                hasSubtitles: !asset.subtitles.isEmpty
            )
        )
        try Self.check(path, force: force)
        // ffmpeg is the command's: a signal ends it and its file as it ends a download.
        let (muxer, audioOnly, section, exact, verbose, silent) = (muxer, audioOnly, section, exact, verbose, silent)
        do {
            try await Interrupted.run {
                try await muxer.write(
                    asset,
                    to: path,
                    audioOnly: audioOnly,
                    section: section,
                    exact: exact,
                    verbose: verbose,
                    silent: silent
                )
            }
        } catch let interrupted as Interrupted {
            Terminal.printError(
                "interrupted; the package is kept at \(asset.path): streamcache export \(asset.id) FILE writes the file"
            )
            throw ExitCode(interrupted.exitCode)
        }
        return path
    }

    /// Whether the package has video: a variant with a resolution or a video codec, or one
    /// that says neither; `nil` when the manifest does not say (a media playlist alone, a
    /// variant without `CODECS` or `RESOLUTION`): the segments tell (``PackageMuxer/streamKinds(of:)``).
    static func hasVideo(_ asset: OfflineAsset) -> Bool? {
        guard let variant = asset.variant else { return nil }
        if variant.resolution != nil { return true }
        guard let codecs = variant.codecs else { return nil }
        return ["avc", "hvc", "hev", "vp0", "vp8", "vp9", "av01", "dvh"].contains { codecs.contains($0) }
    }
}
