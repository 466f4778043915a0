import Foundation
import StreamCache

/// The `Host` values that name this listener; anything else is refused (DNS rebinding).
///
/// A page on `evil.example` that resolves its name to `127.0.0.1` reaches the listener with
/// `Host: evil.example:PORT`; only loopback names, the address the server was told to bind and
/// the address the connection arrived on are accepted, always with the listener's port.
public struct ListenerAuthority: Sendable {
    private let names: Set<String>

    /// - Parameter boundHost: the address given with `--host` (`127.0.0.1` by default).
    public init(boundHost: String) {
        var names: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
        let bound = boundHost.lowercased()
        if bound != "0.0.0.0" && bound != "::" && bound != "[::]" { names.insert(Self.bracketed(bound)) }
        self.names = names
    }

    /// Whether `host` (the request's `Host` header) names the listener; ASCII case is ignored.
    ///
    /// - Parameters:
    ///   - port: the port the connection arrived on (the listener's).
    ///   - localAddress: the IP address the connection arrived on.
    public func accepts(_ host: String, port: Int, localAddress: @autoclosure () -> String? = nil) -> Bool {
        var name = host.lowercased()
        let suffix = ":\(port)"
        if name.hasSuffix(suffix) {
            name.removeLast(suffix.count)
        } else if port != 80 || (!name.hasSuffix("]") && name.contains(":")) {
            // Only a listener on port 80 may be named without its port (the default for http).
            return false
        }
        return names.contains(name) || localAddress().map { Self.bracketed($0.lowercased()) == name } ?? false
    }

    /// IPv6 addresses as they appear in a `Host` header: `[::1]`.
    private static func bracketed(_ address: String) -> String {
        address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
    }
}

extension ListenerAuthority {
    /// The listener's address once bound, to refuse origin URLs (and redirect targets) that
    /// point back at the proxy itself: a request loop with no client at its end.
    public final class Bound: Sendable {
        /// Set once, when the listener is bound.
        private let address = Locked<(host: String, port: Int)?>(nil)

        public init() {}

        /// Notes the address the listener is bound to.
        public func bind(host: String, port: Int) {
            address.withLock { $0 = (host.lowercased(), port) }
        }

        /// Whether judging `url` (``refusal(of:)``) would wait on the resolver or the interfaces'
        /// addresses: a URL on the listener's port whose host is neither the bound one nor a
        /// loopback number. An event loop leaves such a URL to a task.
        public func judgingWaits(_ url: URL) -> Bool {
            guard let (host, port) = address.value, let urlHost = url.host?.lowercased() else { return false }
            let urlPort = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            guard urlPort == port else { return false }
            let name = urlHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            return name != host && !MachineAddresses.isLoopbackNumber(name)
        }

        /// Why the engine must not fetch `url`, or `nil`: it names this listener.
        ///
        /// A URL on the listener's port whose host is this machine in any spelling (see
        /// ``MachineAddresses``) is refused; the name is looked up only for that port.
        public func refusal(of url: URL) -> String? {
            guard let (host, port) = address.value, let urlHost = url.host?.lowercased() else { return nil }
            let urlPort = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            guard urlPort == port else { return nil }
            let name = urlHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard name == host || MachineAddresses.namesThisMachine(name) else { return nil }
            return "the URL points at this proxy itself (\(url.host ?? ""):\(port))"
        }
    }
}
