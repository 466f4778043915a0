import Foundation

/// A file name to write one file to, as yt-dlp's `-o` takes it: literal text with fields
/// `%(title)s`, `%(id)s`, `%(height)s` and `%(ext)s`, relative to the current folder.
///
/// The file's extension says its container (`.mp4`, `.m4a`, `.mkv`, `.ts`); with `%(ext)s` the
/// package chooses (`.mkv` with subtitles, `.m4a` without video, else `.mp4`). A field's value
/// never leaves the folder the template names and never disguises the file: `/`, control
/// characters, characters that reorder text (U+202E) and leading dots are replaced.
struct OutputTemplate {
    /// The containers one file can be written in, by extension.
    static let extensions: Set<String> = ["mp4", "m4a", "mkv", "ts"]
    static let fields: Set<String> = ["title", "id", "height", "ext"]

    let text: String

    /// What a template is filled with.
    struct Values {
        var title: String
        var id: String
        var height: Int?
        var hasVideo: Bool
        var hasSubtitles: Bool
    }

    /// Checks `text` before any download: every field known, and an extension that names a
    /// container (or `%(ext)s`).
    ///
    /// - Throws: ``CommandFailure`` with status 64 saying what is wrong.
    init(_ text: String, argument: String = "-o") throws {
        func usage(_ message: String) -> CommandFailure {
            CommandFailure("invalid \(argument) '\(text.prefix(200))': \(message)", status: ExitStatus.usage)
        }
        guard !text.isEmpty else { throw usage("give a file name such as '%(title)s.%(ext)s'") }
        var rest = Substring(text)
        while let start = rest.range(of: "%(") {
            guard let end = rest[start.upperBound...].range(of: ")s") else {
                throw usage("a field is not closed: write %(name)s")
            }
            let name = String(rest[start.upperBound..<end.lowerBound])
            guard Self.fields.contains(name) else {
                throw usage(
                    "unknown field %(\(name.prefix(40)))s; the fields are %(title)s, %(id)s, %(height)s and %(ext)s"
                )
            }
            rest = rest[end.upperBound...]
        }
        self.text = text
        if !text.hasSuffix(".%(ext)s") {
            let ext = (text as NSString).pathExtension.lowercased()
            guard Self.extensions.contains(ext) else {
                throw usage(
                    ext.isEmpty
                        ? "the file has no extension; end it with .mp4, .m4a, .mkv, .ts or .%(ext)s"
                        : "'.\(ext.prefix(20))' is not a container written here; use .mp4, .m4a, .mkv, .ts or .%(ext)s"
                )
            }
        }
    }

    /// The path `values` make of the template.
    func path(_ values: Values) -> String {
        let ext = values.hasSubtitles ? "mkv" : values.hasVideo ? "mp4" : "m4a"
        return
            text
            .replacingOccurrences(of: "%(title)s", with: Self.safe(values.title))
            .replacingOccurrences(of: "%(id)s", with: values.id)
            .replacingOccurrences(of: "%(height)s", with: values.height.map(String.init) ?? "NA")
            .replacingOccurrences(of: "%(ext)s", with: ext)
    }

    /// `value` as one file name: no `/`, no control or format characters (a right-to-left
    /// override would show `gpj.exe` as `exe.jpg`), no leading dots or blanks, at most 200
    /// bytes; `NA` for nothing.
    static func safe(_ value: String) -> String {
        var name = String(value.map { isSafe($0) ? $0 : "_" })
        while let first = name.first, first == "." || first == " " { name.removeFirst() }
        while name.utf8.count > 200 { name.removeLast() }
        return name.isEmpty ? "NA" : name
    }

    private static func isSafe(_ character: Character) -> Bool {
        guard character != "/", character != "\\", !character.isNewline else { return false }
        return character.unicodeScalars.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: false
            default: true
            }
        }
    }
}
