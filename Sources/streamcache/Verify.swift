import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every cached byte against its checksum and forget the bad ones.",
            discussion: """
                Bytes changed behind the cache's back (a data file overwritten or cut short) are \
                forgotten, and fetched again when next read. StreamCache also checks a data file \
                this way when it opens one whose size or time is not what the index recorded.
                """
        )

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let interactive = Terminal.stderrIsTerminal
            let report = try await cache.withEngine(evicts: false) { engine in
                try await engine.verify { done, total in
                    guard interactive else { return }
                    StandardStream.error.write(Data("\rverify  \(done) of \(total) resources\u{1B}[K".utf8))
                }
            }
            if interactive { StandardStream.error.write(Data("\r\u{1B}[K".utf8)) }
            for damage in report.damaged {
                print(
                    "\(damage.url): \(ByteCount.format(damage.bytes)) were bad, forgotten; they are fetched again when read"
                )
            }
            print(
                "checked \(report.resources) resource(s), \(ByteCount.format(report.checkedBytes)) against checksums:"
                    + (report.damaged.isEmpty ? " all good" : " \(report.damaged.count) damaged")
            )
        }
    }
}
