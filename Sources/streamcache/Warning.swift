import Foundation

/// A line on stderr about something the command did on its own and went on
/// (`streamcache: warning: …`).
enum Warning {
    /// The smallest budget that holds an episode or two: below it, a warning.
    static let smallBudget: Int64 = 16 << 20

    /// A warning for a budget under ``smallBudget`` (a typo for `100M`, say): most resources would
    /// be larger, and stream through uncached.
    static func checkBudget(_ bytes: Int64) {
        guard bytes < smallBudget else { return }
        print(
            "a budget of \(ByteCount.format(bytes)) is under \(ByteCount.format(smallBudget)): most episodes are "
                + "larger, and stream through uncached (streamcache config --max-size 2G sets another)"
        )
    }

    /// A warning for a resource of `length` bytes larger than the cache's budget: it is read
    /// through, and not kept.
    static func checkFits(_ url: URL, length: Int64?, budget: Int64) {
        guard let length, length > budget else { return }
        print(
            "\(url.lastPathComponent) is \(ByteCount.format(length)), more than the cache's budget of "
                + "\(ByteCount.format(budget)): it is read through and not kept (streamcache config --max-size)"
        )
    }

    static func print(_ message: String) {
        let shown = Terminal.visible(message, keepingLines: false)
        StandardStream.error.write(Data("streamcache: warning: \(shown)\n".utf8))
    }
}
