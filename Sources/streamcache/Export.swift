import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the complete resource to a file, fetching only the bytes not cached yet.",
            discussion: "FILE may be a folder: the file is then named after the URL, as curl -O and wget do."
        )

        @Argument(help: "The http(s) URL of the resource.")
        var url: String

        @Argument(help: "The file (or folder) to write.")
        var file: String

        @OptionGroup var transfer: TransferOptions

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let (url, credentials) = try URLArgument.parseFetching(url)
            let output = try Self.outputPath(file, url: url)
            try OutputFile.check(output)
            try await Download(
                url: url,
                headers: try originHeaders.fields() + credentials,
                range: .from(first: 0, last: nil),
                output: output,
                progress: Progress.make(label: "export", forced: transfer.progress)
            ).run(cache: cache, timeout: transfer.timeoutDuration)
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
