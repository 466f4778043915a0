import ArgumentParser
import Foundation

/// curl's options that `get` takes as a curl user types them (`-fsSL`, `-C -`, `--output-dir`):
/// some say what `get` does anyway, and are accepted so.
struct CurlOptions: ParsableArguments {
    @Flag(name: [.customShort("L"), .long], help: "Follow redirects: get always does (curl's -L).")
    var location = false

    @Flag(
        name: [.customShort("f"), .long],
        help: "Fail on an error status: get always does, with status 22 (curl's -f)."
    )
    var fail = false

    @Flag(name: [.customShort("S"), .long], help: "Say errors when silent: get always does (curl's -S).")
    var showError = false

    @Flag(name: .long, help: "Accepted as curl's: get asks for the bytes unencoded and writes them as they are.")
    var compressed = false

    @Flag(
        name: [.customShort("v"), .long],
        help: "Say on stderr what was asked and what the response said (its fields, as -I prints them), as curl -v."
    )
    var verbose = false

    @Option(
        name: [.customShort("C"), .long],
        help: ArgumentHelp(
            "With -, go on with the output file: what the cache holds is not fetched again (curl's -C -).",
            valueName: "-"
        )
    )
    var continueAt: String?

    @Option(name: .long, help: "The folder -o and -O write in (curl's --output-dir).")
    var outputDir: String?

    func validate() throws {
        if let continueAt, continueAt != "-" {
            throw ValidationError(
                "invalid -C '\(continueAt.prefix(20))': give -C - (go on where the file ends); for an offset use --range A-"
            )
        }
    }

    /// `path` in `--output-dir`, unless it is stdout or absolute.
    func place(_ path: String) -> String {
        guard let outputDir, path != "-", !path.hasPrefix("/") else { return path }
        return (outputDir as NSString).appendingPathComponent(path)
    }
}
