import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a URL's host names this machine, however it is written: a loopback or unspecified
/// address in any spelling the resolver takes (`127.1`, `2130706433`, `[::ffff:127.0.0.1]`,
/// `[0:0:0:0:0:0:0:1]`), an address of one of the machine's interfaces, or a name that resolves
/// to any of these.
enum MachineAddresses {
    /// An IP address in a form that compares: IPv4-mapped IPv6 addresses are their IPv4 address.
    enum Address: Hashable {
        case v4(UInt32)
        case v6([UInt8])

        /// Whether it is a loopback (`127.0.0.0/8`, `::1`) or unspecified (`0.0.0.0`, `::`)
        /// address: each reaches this machine.
        var isLoopbackOrUnspecified: Bool {
            switch self {
            case .v4(let value): value >> 24 == 127 || value == 0
            case .v6(let bytes): bytes.dropLast().allSatisfy { $0 == 0 } && (bytes[15] == 1 || bytes[15] == 0)
            }
        }

        init?(_ storage: UnsafePointer<sockaddr>) {
            switch Int32(storage.pointee.sa_family) {
            case AF_INET:
                let value = storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                self = .v4(UInt32(bigEndian: value))
            case AF_INET6:
                var address = storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                self.init(v6: withUnsafeBytes(of: &address) { Array($0) })
            default:
                return nil
            }
        }

        init(v6 bytes: [UInt8]) {
            // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated but still routed).
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            let compatible =
                bytes[0..<12].allSatisfy { $0 == 0 } && !(bytes[12] == 0 && bytes[13] == 0 && bytes[14] == 0)
            if mapped || compatible {
                self = .v4(bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            } else {
                self = .v6(bytes)
            }
        }
    }

    /// Whether `host` (a URL's host, brackets allowed) names this machine.
    static func namesThisMachine(_ host: String) -> Bool {
        let addresses = resolved(host)
        guard !addresses.isEmpty else { return false }
        if addresses.contains(where: \.isLoopbackOrUnspecified) { return true }
        let own = interfaceAddresses()
        return addresses.contains { own.contains($0) }
    }

    /// Whether `host` is a loopback or unspecified address written as a number, which names this
    /// machine without a lookup; `false` for a name or any other address, which
    /// ``namesThisMachine(_:)`` judges by the resolver or the interfaces' addresses.
    static func isLoopbackNumber(_ host: String) -> Bool {
        numeric(host)?.isLoopbackOrUnspecified ?? false
    }

    /// The address `host` is, parsed as the resolver parses numbers; `nil` for a name.
    private static func numeric(_ host: String) -> Address? {
        var name = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if let zone = name.firstIndex(of: "%") { name = String(name[..<zone]) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return Address(v6: withUnsafeBytes(of: &v6) { Array($0) })
        }
        // inet_aton takes what getaddrinfo takes for IPv4: 127.1, 0x7f000001, 2130706433.
        var v4 = in_addr()
        if inet_aton(name, &v4) != 0 { return .v4(UInt32(bigEndian: v4.s_addr)) }
        return nil
    }

    /// The addresses `host` stands for: parsed as the resolver parses numbers, else looked up.
    static func resolved(_ host: String) -> [Address] {
        var name = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if let zone = name.firstIndex(of: "%") { name = String(name[..<zone]) }
        // `localhost.` is `localhost` to a resolver that knows it, and to one that does not.
        while name.count > 1, name.hasSuffix(".") { name.removeLast() }
        if let address = numeric(name) { return [address] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        return addresses(from: first, next: { $0.ai_next }, address: { $0.ai_addr })
    }

    /// The addresses of this machine's interfaces.
    static func interfaceAddresses() -> Set<Address> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        return Set(addresses(from: first, next: { $0.ifa_next }, address: { $0.ifa_addr }))
    }

    /// The addresses of a C list of entries (`addrinfo`, `ifaddrs`) from `first` on.
    private static func addresses<Entry>(
        from first: UnsafeMutablePointer<Entry>,
        next: (Entry) -> UnsafeMutablePointer<Entry>?,
        address: (Entry) -> UnsafeMutablePointer<sockaddr>?
    ) -> [Address] {
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<Entry>? = first
        while let current = entry {
            if let found = address(current.pointee).flatMap({ Address(UnsafePointer($0)) }) { addresses.append(found) }
            entry = next(current.pointee)
        }
        return addresses
    }
}
