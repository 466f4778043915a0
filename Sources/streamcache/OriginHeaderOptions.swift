import ArgumentParser
import StreamCache

/// `-H 'Name: value'`: request headers for the origin of one resource (never stored).
struct OriginHeaderOptions: ParsableArguments {
    @Option(
        name: [.customShort("H"), .long],
        help: "A request header for the origin, 'Name: value' (repeatable; never stored)."
    )
    var header: [String] = []

    /// The headers as fields.
    ///
    /// - Throws: ``StreamCacheError`` for a line that is not `Name: value`.
    func fields() throws -> [HeaderField] {
        try header.map { line in
            guard let field = HeaderField(parsing: line) else {
                throw CommandFailure("invalid --header '\(line)': expected 'Name: value'", status: ExitStatus.usage)
            }
            return field
        }
    }
}
