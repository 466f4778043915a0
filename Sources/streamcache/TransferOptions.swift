import ArgumentParser

/// Options of commands that download: progress and a timeout for a silent origin.
struct TransferOptions: ParsableArguments {
    @Flag(name: .long, help: "Show progress on stderr even when it is not a terminal.")
    var progress = false

    @Option(name: .long, help: "Seconds to wait for the origin to connect and between bytes (default 10 and 30).")
    var timeout: Double?

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 86400) {
            throw ValidationError("invalid --timeout \(timeout): give seconds above 0, at most 86400 (one day)")
        }
    }

    var timeoutDuration: Duration? { timeout.map { .milliseconds(Int64($0 * 1000)) } }
}
