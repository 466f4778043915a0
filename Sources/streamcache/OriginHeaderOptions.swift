import ArgumentParser
import Foundation
import StreamCache

/// `-H 'Name: value'` and `-b COOKIES`: request headers and cookies for the origin of one
/// resource (never stored).
struct OriginHeaderOptions: ParsableArguments {
    @Option(
        name: [.customShort("H"), .long],
        help: "A request header for the origin, 'Name: value' (repeatable; never stored)."
    )
    var header: [String] = []

    @Option(
        name: [.customShort("b"), .long],
        help: ArgumentHelp(
            "Cookies for the origin: 'a=1; b=2', or a Netscape cookie file as curl -b and yt-dlp --cookies read (never stored).",
            valueName: "data|file"
        )
    )
    var cookie: [String] = []

    /// The headers and cookies, each sent only where it goes.
    ///
    /// - Throws: ``CommandFailure`` (status 64) for a header or cookie that cannot be used.
    func originHeaders(extra: [HeaderField] = []) throws -> OriginHeaders {
        OriginHeaders(fields: try fields() + extra, cookies: try cookies())
    }

    /// `-b` values: a list of `name=value` pairs when one holds `=`, else a cookie file.
    func cookies() throws -> [OriginCookie] {
        try cookie.flatMap { text in try Self.cookies(text) }
    }

    static func cookies(_ text: String) throws -> [OriginCookie] {
        if text.contains("=") {
            guard let cookies = OriginCookie.parseList(text) else {
                throw CommandFailure(
                    "invalid -b '\(text.prefix(60))': expected 'name=value; name=value'",
                    status: ExitStatus.usage
                )
            }
            return cookies
        }
        guard let data = FileManager.default.contents(atPath: text) else {
            throw CommandFailure("cannot read the cookie file \(text)", status: ExitStatus.usage)
        }
        do {
            return try OriginCookie.parseNetscape(String(decoding: data, as: UTF8.self))
        } catch let error as StreamCacheError {
            throw CommandFailure("\(text): \(error.message)", status: ExitStatus.usage)
        }
    }

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
