import Foundation

/// Progress of long work on stderr: one line redrawn on a terminal (bytes, percent, rate, time
/// left); plain lines every few seconds when asked for (`--progress`) and stderr is no terminal.
struct Progress {
    let label: String
    let interactive: Bool
    private var lastReport = ContinuousClock.now
    private let started = ContinuousClock.now

    /// Progress on a terminal, or plain lines if `forced`; `nil` when neither.
    static func make(label: String, forced: Bool) -> Progress? {
        let interactive = Terminal.stderrIsTerminal
        guard interactive || forced else { return nil }
        return Progress(label: label, interactive: interactive)
    }

    private init(label: String, interactive: Bool) {
        self.label = label
        self.interactive = interactive
    }

    /// Notes `done` of `total` bytes (`nil`: not known yet); shown at most 10 times a second.
    mutating func update(done: Int64, total: Int64?) {
        let interval: Duration = interactive ? .milliseconds(100) : .seconds(2)
        guard lastReport.duration(to: .now) >= interval else { return }
        lastReport = .now
        let line = Self.line(label: label, done: done, total: total, seconds: elapsed)
        if interactive {
            StandardStream.error.write(Data("\r\(line)\u{1B}[K".utf8))
        } else {
            Terminal.printError(line)
        }
    }

    /// `LABEL  DONE of TOTAL  PERCENT%  RATE/s  SECONDS s left`, each size in the units of
    /// ``ByteCount/format(_:)``.
    static func line(label: String, done: Int64, total: Int64?, seconds: Double) -> String {
        var parts = [label, ByteCount.format(done) + (total.map { " of " + ByteCount.format($0) } ?? "")]
        if let total, total > 0 { parts.append(String(format: "%.0f%%", Double(done) * 100 / Double(total))) }
        if seconds > 0.2 {
            let rate = Double(done) / seconds
            parts.append(ByteCount.format(Int64(rate)) + "/s")
            if let total, rate > 0, total > done {
                parts.append("\(Self.duration(Double(total - done) / rate)) left")
            }
        }
        return parts.joined(separator: "  ")
    }

    /// `42 s`, `3 min 5 s`, `1 h 2 min`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }

    private var elapsed: Double {
        let duration = started.duration(to: .now)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Says what the command waits for before the first byte (an origin that accepts but does
    /// not answer should not look like a hung command).
    func waiting(for what: String) {
        let line = "\(label)  waiting for \(what)…"
        if interactive {
            StandardStream.error.write(Data("\r\(line)\u{1B}[K".utf8))
        } else {
            Terminal.printError(line)
        }
    }

    /// Removes the redrawn line (before another message).
    func clear() {
        if interactive { StandardStream.error.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// The last line: what was done, and how fast.
    func finish(done: Int64) {
        clear()
        Terminal.printError(Self.line(label: label, done: done, total: nil, seconds: elapsed) + " — done")
    }
}
