import Foundation

/// Credentials in URLs (`http://user:password@host/`): never stored, logged or printed.
public enum Credentials {
    /// `text` with the user information of every URL in it replaced by `***`
    /// (`http://***@host/a.mp3`), for messages and logs.
    public static func redacted(_ text: String) -> String {
        guard text.contains("@") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = rest.range(of: "://") {
            result += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            let authorityEnd = rest.firstIndex { "/?#\\ \t\"'".contains($0) } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                result += "***"
                rest = rest[at...]
            }
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
