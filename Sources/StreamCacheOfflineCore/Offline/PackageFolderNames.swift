/// The folder names of one package's tracks, unique by construction: every format's planner
/// takes each name from here. A name already given, compared without regard to
/// case (a package may be copied to a file system that ignores it), gets the first free
/// `-2`, `-3`, … after it, so no two tracks ever share a folder, whatever their languages say
/// (`en`, `EN`, `en-3`).
package struct PackageFolderNames {
    private var taken: Set<String> = []

    /// A folder name for a track of `kind` in `language` (kept to ASCII letters, digits and
    /// `-`, at most 35 characters), not given before.
    package mutating func claim(_ kind: String, language: String?) -> String {
        var base = kind
        let safe = (language ?? "").lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        if !safe.isEmpty { base += "-" + safe.prefix(35) }
        var name = base
        var counter = 2
        while taken.contains(name.lowercased()) {
            name = "\(base)-\(counter)"
            counter += 1
        }
        taken.insert(name.lowercased())
        return name
    }

    package init() {}
}
