import ArgumentParser
import Foundation
import StreamCache
import StreamCacheOffline

extension StreamCacheCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a complete resource, or an offline package as one playable file.",
            discussion: """
                For a URL: the resource's bytes, fetching only those not cached yet; FILE may be a folder, \
                and the file is then named after the URL, as curl -O and wget do. For the id of an offline \
                package (or its first 4+ characters): the package muxed by ffmpeg without re-encoding into \
                FILE, .mp4, .m4a, .mkv or .ts by extension, or a template such as '%(title)s.%(ext)s'; with \
                --section, only that part of its timeline.
                """
        )

        @Argument(help: "The http(s) URL of the resource, or the id of an offline package.")
        var url: String

        @Argument(help: "The file (or folder) to write.")
        var file: String

        @Option(name: .long, help: "The offline library folder, for a package id (default as for 'packages ls').")
        var library: String?

        @Option(
            name: [.long, .customLong("download-sections")],
            help: ArgumentHelp(
                "With a package id: only this part of its timeline, START-END (1:02:00-1:04:30, 90-150, *-10:00), cut from the package on disk.",
                valueName: "START-END"
            )
        )
        var section: String?

        @OptionGroup var singleFile: SingleFileOptions

        @OptionGroup var transfer: TransferOptions

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var cache: CacheOptions

        func validate() throws {
            _ = try timeSection()
            if singleFile.exact, section == nil {
                throw ValidationError("--exact cuts a section: give --section START-END")
            }
        }

        func run() async throws {
            if !url.contains("://") {
                let offline = LibraryOptions.library(library, cache: cache)
                if let id = try offline.id(named: url), let asset = offline.asset(id) {
                    return try await Self.export(
                        asset,
                        to: file,
                        section: try timeSection(),
                        options: singleFile,
                        silent: transfer.silent
                    )
                }
            }
            if section != nil {
                throw CommandFailure(
                    "--section cuts an offline package: give its id (streamcache packages ls), or use get URL --section",
                    status: ExitStatus.usage
                )
            }
            let (url, credentials) = try URLArgument.parseFetching(url)
            let manifest = ["m3u8", "m3u", "mpd"].contains(url.pathExtension.lowercased())
            if manifest, OutputTemplate.extensions.contains((file as NSString).pathExtension.lowercased()) {
                // The playlist's text under a media file's name is nobody's wish.
                throw CommandFailure(
                    "\(Credentials.redacted(url.absoluteString)) is a manifest, and export writes a URL's own bytes: "
                        + "streamcache download URL -o \(file) writes its media as one file",
                    status: ExitStatus.usage
                )
            }
            let output = try Self.outputPath(file, url: url)
            try OutputFile.check(output)
            try await Download(
                url: url,
                headers: try originHeaders.originHeaders(extra: credentials),
                range: .from(first: 0, last: nil),
                output: output,
                progress: transfer.silent ? nil : Progress.make(label: "export", forced: transfer.progress)
            ).run(cache: cache, transfer: transfer)
        }

        /// The package `asset` as one file, when it is complete.
        /// `--section`, parsed.
        func timeSection() throws -> TimeSection? {
            try SectionOption.one(section)
        }

        static func export(
            _ asset: OfflineAsset,
            to file: String,
            section: TimeSection? = nil,
            options: SingleFileOptions,
            silent: Bool
        ) async throws {
            guard asset.state == .complete else {
                throw CommandFailure(
                    "package \(asset.id) is \(asset.state.rawValue): finish it first (streamcache download \(asset.id))"
                )
            }
            var output = try SingleFileOutput(
                file,
                argument: "FILE",
                force: options.force,
                verbose: options.verbose,
                silent: silent
            )
            output.section = section
            output.exact = options.exact
            try await output.write(asset)
        }

        /// `file`, or the URL's last path segment inside it when it is a folder.
        static func outputPath(_ file: String, url: URL) throws -> String {
            var isDirectory: ObjCBool = false
            guard
                file.hasSuffix("/")
                    || (FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory)
                        && isDirectory.boolValue)
            else { return file }
            guard let name = RemoteFileName.of(url) else {
                throw CommandFailure(
                    "\(file) is a folder and the URL names no file; give a file name",
                    status: ExitStatus.usage
                )
            }
            return LocalPath.appending(name, to: file)
        }
    }
}
