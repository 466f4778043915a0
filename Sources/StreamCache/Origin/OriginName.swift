import Foundation

extension URL {
    /// The origin as messages name it: host and port as the URL gives them (`cdn.example.com`,
    /// `127.0.0.1:8080`, `[::1]:8080`), so that a user can tell two origins on one host apart.
    public var originName: String {
        guard let host, !host.isEmpty else { return absoluteString }
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port.map { "\(shown):\($0)" } ?? shown
    }
}
