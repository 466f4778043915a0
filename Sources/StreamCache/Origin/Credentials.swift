import Foundation

/// Credentials in URLs (`http://user:password@host/`): never stored, logged or printed.
public enum Credentials {
    /// `text` with the user information of every URL in it replaced by `***`
    /// (`http://***@host/a.mp3`), for messages and logs.
    ///
    /// Whatever the spelling: one slash or several after the scheme (`http:/alice:pw@host`, which
    /// the proxy collapses to), and passwords holding `#`, `/` or `@`, which a URL parser reads as
    /// a fragment, a path or a host. Where a path holds an `@`, more is hidden than needed.
    public static func redacted(_ text: String) -> String {
        guard text.contains("@") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = rest.range(of: ":/") ?? rest.range(of: ":\\") {
            let authorityStart =
                rest[separator.lowerBound...].dropFirst().firstIndex { $0 != "/" && $0 != "\\" }
                ?? rest.endIndex
            result += rest[..<authorityStart]
            rest = rest[authorityStart...]
            let tokenEnd = rest.firstIndex { " \t\r\n\"'<>".contains($0) } ?? rest.endIndex
            guard let firstAt = rest[..<tokenEnd].firstIndex(of: "@") else { continue }
            let authorityEnd = rest[firstAt..<tokenEnd].firstIndex { "/\\?".contains($0) } ?? tokenEnd
            let lastAt = rest[..<authorityEnd].lastIndex(of: "@") ?? firstAt
            result += "***"
            rest = rest[lastAt...]
        }
        return result + rest
    }

    /// `url` without its user information, and the `Authorization: Basic` header it stood for.
    public static func split(_ url: URL) -> (url: URL, authorization: HeaderField?) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            components.user != nil || components.password != nil
        else { return (url, nil) }
        let user = components.user ?? ""
        let password = components.password ?? ""
        components.user = nil
        components.password = nil
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        return (components.url ?? url, HeaderField("Authorization", "Basic \(token)"))
    }
}
