import Foundation

/// A line on stderr about something the command did on its own and went on
/// (`streamcache: warning: …`).
enum Warning {
    static func print(_ message: String) {
        FileHandle.standardError.write(Data("streamcache: warning: \(Terminal.visible(message, keepingLines: false))\n".utf8))
    }
}
