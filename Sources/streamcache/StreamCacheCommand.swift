import ArgumentParser
import Foundation
import StreamCache

#if canImport(Glibc)
import Glibc
#endif

@main
struct StreamCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streamcache",
        abstract: "A persistent byte-range cache for streaming media: each byte is downloaded once.",
        version: "0.1.0",
        subcommands: [Serve.self, Get.self, List.self, Remove.self, Export.self, HLS.self, Origin.self, Drain.self]
    )

    /// Runs the command; failures become one line on stderr and a non-zero exit.
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as StreamCacheError {
            Terminal.fail(error.message)
        } catch is CancellationError {
            Terminal.fail("cancelled")
        } catch {
            // Help and version print as usual; a usage error becomes one line, like every other error.
            guard exitCode(for: error) != .success else { exit(withError: error) }
            let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            Terminal.printError("streamcache: error: \(message) (see 'streamcache --help')")
            Foundation.exit(exitCode(for: error).rawValue)
        }
    }
}

/// Writing to the terminal's error stream.
enum Terminal {
    /// Prints `streamcache: error: MESSAGE` on stderr and exits with status 1.
    static func fail(_ message: String) -> Never {
        printError("streamcache: error: \(message)")
        exit(1)
    }

    /// Prints a line on stderr.
    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Whether stderr is a terminal (progress bars) rather than a file or pipe (progress lines).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
