import ArgumentParser
import Foundation
import StreamCache
import StreamCacheHLS

#if canImport(Glibc)
import Glibc
#endif

@main
struct StreamCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streamcache",
        abstract: "A persistent byte-range cache for streaming media: each byte is downloaded once.",
        version: "0.1.0",
        subcommands: [
            Serve.self, Get.self, Export.self, List.self, Remove.self, Pin.self, Unpin.self, Config.self, HLS.self,
            Verify.self, Origin.self, Drain.self,
        ]
    )

    /// Runs the command; failures become one line on stderr and a non-zero exit.
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if command is StreamCacheCommand {
                // Bare `streamcache`: say what it can do.
                print(helpMessage())
                return
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as StreamCacheError {
            Terminal.fail(error.message, status: ExitStatus.of(error))
        } catch let error as OutputError {
            Terminal.fail(error.message, status: ExitStatus.writeError)
        } catch let error as OfflineError {
            Terminal.fail(error.message)
        } catch is CancellationError {
            Terminal.fail("cancelled")
        } catch {
            // Help and version print as usual; a usage error becomes one line, like every other error.
            guard exitCode(for: error) != .success else { exit(withError: error) }
            if let unknown = unknownCommand() {
                Terminal.printError("streamcache: error: \(unknown) (see 'streamcache --help')")
                Foundation.exit(exitCode(for: error).rawValue)
            }
            let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            Terminal.printError("streamcache: error: \(message) (see '\(helpCommand())')")
            Foundation.exit(exitCode(for: error).rawValue)
        }
    }
}

extension StreamCacheCommand {
    /// `unknown command 'gte' (did you mean 'get'?)` when the first argument names no command.
    static func unknownCommand(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.compactMap { $0.configuration.commandName ?? defaultName($0) }
        guard !names.contains(first) else { return nil }
        let closest = names.min { distance($0, first) < distance($1, first) }
        if let closest, distance(closest, first) <= 2 {
            return "unknown command '\(first)' (did you mean '\(closest)'?)"
        }
        return "unknown command '\(first)'; commands: \(names.joined(separator: ", "))"
    }

    /// `streamcache get --help` for a usage error of `get`, as far as the arguments name commands
    /// (`streamcache hls download --help`); `streamcache --help` otherwise.
    static func helpCommand(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> String {
        var words = ["streamcache"]
        var commands: [ParsableCommand.Type] = configuration.subcommands
        for argument in arguments {
            guard let command = commands.first(where: { ($0.configuration.commandName ?? defaultName($0)) == argument })
            else { break }
            words.append(argument)
            commands = command.configuration.subcommands
        }
        return (words + ["--help"]).joined(separator: " ")
    }

    private static func defaultName(_ command: ParsableCommand.Type) -> String {
        String(describing: command).lowercased()
    }

    /// The edit distance between two words (Levenshtein).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Writing to the terminal's error stream.
enum Terminal {
    /// Prints `streamcache: error: MESSAGE` on stderr and exits with `status`.
    static func fail(_ message: String, status: Int32 = ExitStatus.failure) -> Never {
        printError("streamcache: error: \(message)")
        exit(status)
    }

    /// Prints a line on stderr.
    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Whether stderr is a terminal (progress bars) rather than a file or pipe (progress lines).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
