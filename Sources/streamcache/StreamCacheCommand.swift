import ArgumentParser
import Foundation
import StreamCache
import StreamCacheOffline

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
            Serve.self, Get.self, Export.self, OfflineDownload.self, List.self, Remove.self, Pin.self, Unpin.self,
            Config.self, Packages.self, Prefetch.self, Verify.self, Origin.self, Drain.self,
        ]
    )

    /// argument-parser's entry point; what a command fails with is said in one line first (see
    /// ``reported(_:)``).
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        TransferMemory.keepBuffersForReuse()
        if let unknown = CommandSuggestion.unknownCommand(in: Array(CommandLine.arguments.dropFirst())) {
            Terminal.printError("streamcache: error: \(unknown)")
            Self.exit(withError: ExitCode(ExitStatus.usage))
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: reported(error))
        }
    }

    /// Says `error` in one line on stderr (`streamcache: error: …`) and returns the `ExitCode`
    /// of its status (see ``ExitStatus``); help, version and `ExitCode` go on to argument-parser
    /// unchanged. A usage error keeps argument-parser's first line and points at the help of
    /// the command the arguments name, instead of printing the whole usage block.
    static func reported(_ error: any Error) -> any Error {
        let line: String
        let status: Int32
        switch error {
        case let error as StreamCacheError: (line, status) = (error.message, ExitStatus.of(error))
        case let error as OutputError: (line, status) = (error.message, ExitStatus.writeError)
        case let error as OfflineError: (line, status) = (error.message, ExitStatus.of(error))
        case let error as CommandFailure: (line, status) = (error.message, error.status)
        case is CancellationError: (line, status) = ("cancelled", ExitStatus.failure)
        case is ExitCode: return error
        default:
            let code = exitCode(for: error)
            guard code != .success else { return error }
            let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            let usage = code == .validationFailure ? " (see '\(helpCommand())')" : ""
            Terminal.printError("streamcache: error: \(message)\(usage)")
            return ExitCode(code.rawValue)
        }
        Terminal.printError("streamcache: error: \(line)")
        return ExitCode(status)
    }
}

extension StreamCacheCommand {
    /// `streamcache get --help` for a usage error of `get`, as far as the arguments name commands
    /// (`streamcache packages download --help`); `streamcache --help` otherwise.
    static func helpCommand(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> String {
        var words = ["streamcache"]
        var commands: [ParsableCommand.Type] = configuration.subcommands
        for argument in arguments {
            guard let command = commands.first(where: { CommandSuggestion.answers($0, to: argument) }) else { break }
            words.append(argument)
            commands = command.configuration.subcommands
        }
        return (words + ["--help"]).joined(separator: " ")
    }
}

/// A failure a command says in one line, with its exit status.
struct CommandFailure: Error {
    let message: String
    let status: Int32

    init(_ message: String, status: Int32 = ExitStatus.failure) {
        self.message = message
        self.status = status
    }
}

/// Writing to the terminal's error stream.
enum Terminal {
    /// Prints a line on stderr, as ``visible(_:keepingLines:)`` shows it.
    static func printError(_ line: String) {
        StandardStream.error.write(Data((visible(line, keepingLines: false) + "\n").utf8))
    }

    /// Whether stderr is a terminal (progress bars) rather than a file or pipe (progress lines).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
