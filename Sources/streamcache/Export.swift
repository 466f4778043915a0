import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the complete resource to a file, fetching only the bytes not cached yet."
        )

        @Argument(help: "The http(s) URL of the resource.")
        var url: String

        @Argument(help: "The file to write.")
        var file: String

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let (url, credentials) = try URLArgument.parseFetching(url)
            let headers = try originHeaders.fields() + credentials
            try await cache.withEngine { engine in
                let stream = try await engine.read(url, headers: headers)
                let output = try OutputFile(path: file)
                var progress = Progress(label: "export", interactive: Terminal.stderrIsTerminal)
                var written: Int64 = 0
                for try await chunk in stream {
                    try output.write(chunk)
                    written += Int64(chunk.count)
                    progress.update(done: written, total: await stream.currentInfo().length)
                }
                try output.commit()
                progress.finish(done: written)
            }
        }
    }
}

/// Progress of long work on stderr: a bar on a terminal, a plain line every few seconds otherwise.
struct Progress {
    let label: String
    let interactive: Bool
    private var lastReport = ContinuousClock.now
    private let started = ContinuousClock.now

    init(label: String, interactive: Bool) {
        self.label = label
        self.interactive = interactive
    }

    mutating func update(done: Int64, total: Int64?) {
        let interval: Duration = interactive ? .milliseconds(100) : .seconds(2)
        guard lastReport.duration(to: .now) >= interval else { return }
        lastReport = .now
        let fraction = total.map { $0 > 0 ? Double(done) / Double($0) : 1 }
        let amount = "\(ByteCount.format(done))" + (total.map { " of \(ByteCount.format($0))" } ?? "")
        if interactive {
            let width = 30
            let filled = Int((fraction ?? 0) * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            let percent = fraction.map { String(format: "%3.0f%%", $0 * 100) } ?? "   ?"
            FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(percent) \(amount)\u{1B}[K".utf8))
        } else {
            let percent = fraction.map { String(format: " (%.0f%%)", $0 * 100) } ?? ""
            Terminal.printError("\(label): \(amount)\(percent)")
        }
    }

    func finish(done: Int64) {
        let seconds =
            Double(started.duration(to: .now).components.attoseconds) / 1e18
            + Double(started.duration(to: .now).components.seconds)
        if interactive { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        Terminal.printError("\(label): \(ByteCount.format(done)) in \(String(format: "%.1f", seconds)) s")
    }
}
