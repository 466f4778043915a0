import Foundation

/// A line on stderr about something the command did on its own and went on
/// (`streamcache: warning: …`).
enum Warning {
    static func print(_ message: String) {
        let shown = Terminal.visible(message, keepingLines: false)
        FileHandle.standardError.write(Data("streamcache: warning: \(shown)\n".utf8))
    }
}
