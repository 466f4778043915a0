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
        name: [.customShort("b"), .long, .customLong("cookies")],
        help: ArgumentHelp(
            "Cookies for the origin: 'a=1; b=2', or a Netscape cookie file as curl -b and yt-dlp --cookies read (never stored).",
            valueName: "data|file"
        )
    )
    var cookie: [String] = []

    @Option(name: [.customShort("A"), .long], help: "The User-Agent header for the origin, as curl -A sends it.")
    var userAgent: String?

    @Option(
        name: [.customShort("u"), .long],
        help: ArgumentHelp(
            "Basic credentials for the origin, as curl -u sends them (never stored).",
            valueName: "user:password"
        )
    )
    var user: String?

    /// The headers and cookies, each sent only where it goes.
    ///
    /// - Throws: ``CommandFailure`` (status 64) for a header or cookie that cannot be used.
    func originHeaders(extra: [HeaderField] = []) throws -> OriginHeaders {
        OriginHeaders(fields: try fields() + curlFields() + extra, cookies: try cookies())
    }

    /// `-A` and `-u` as the headers they stand for.
    private func curlFields() throws -> [HeaderField] {
        var fields: [HeaderField] = []
        if let userAgent {
            guard let field = HeaderField(parsing: "User-Agent: " + userAgent) else {
                throw CommandFailure("invalid -A: a User-Agent without line breaks", status: ExitStatus.usage)
            }
            fields.append(field)
        }
        if let user {
            guard user.contains(":"), !user.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                // The line names no part of it: it may be a password.
                throw CommandFailure("invalid -u: expected user:password", status: ExitStatus.usage)
            }
            fields.append(HeaderField("Authorization", "Basic " + Data(user.utf8).base64EncodedString()))
        }
        return fields
    }

    /// `-b` values: a list of `name=value` pairs when one holds `=`, else a cookie file.
    func cookies() throws -> [OriginCookie] {
        try cookie.flatMap { text in try Self.cookies(text) }
    }

    static func cookies(_ text: String) throws -> [OriginCookie] {
        if text.contains("=") {
            guard let cookies = OriginCookie.parseList(text) else {
                // The values are credentials: the line names none of them.
                throw CommandFailure(
                    "invalid -b: expected 'name=value; name=value', each value in ASCII without ';' or a line break",
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
                // A value may be a credential (`Authorization: Bearer …`): only the name is shown.
                let name = String(line.prefix { $0 != ":" && !$0.isWhitespace }.prefix(40))
                throw CommandFailure(
                    "invalid --header '\(name)': expected 'Name: value', a value without line breaks",
                    status: ExitStatus.usage
                )
            }
            return field
        }
    }
}
