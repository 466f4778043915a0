import Foundation

extension Terminal {
    /// `text` with every character that would steer a terminal shown as an escape instead
    /// (`\x1B`, `\u{202E}`): C0 and C1 controls and DEL, and the bidirectional overrides that
    /// reorder what is shown. Line breaks stay when `keepingLines`, tabs always.
    ///
    /// Every text the command line prints for people passes here: names, languages, codecs and
    /// URIs from playlists, an origin's reason phrases and URLs are the origin's words, and an
    /// escape sequence among them would rewrite the user's screen.
    static func visible(_ text: String, keepingLines: Bool = true) -> String {
        guard text.unicodeScalars.contains(where: { steers($0, keepingLines: keepingLines) }) else { return text }
        var shown = ""
        shown.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            guard steers(scalar, keepingLines: keepingLines) else {
                shown.unicodeScalars.append(scalar)
                continue
            }
            shown +=
                scalar.value < 0x80
                ? String(format: "\\x%02X", scalar.value) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }
        return shown
    }

    private static func steers(_ scalar: Unicode.Scalar, keepingLines: Bool) -> Bool {
        switch scalar.value {
        case 0x09: false
        case 0x0A: !keepingLines
        case 0x00..<0x20, 0x7F..<0xA0: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// Prints `text` on stdout as ``Terminal/visible(_:keepingLines:)`` shows it: within this
/// command-line tool, every `print` of a text goes through here.
func print(_ text: String, terminator: String = "\n") {
    Swift.print(Terminal.visible(text), terminator: terminator)
}
