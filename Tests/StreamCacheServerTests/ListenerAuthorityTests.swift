import Foundation
import StreamCacheServer
import Testing

@Suite struct ListenerAuthorityTests {
    let loopback = ListenerAuthority(boundHost: "127.0.0.1")

    @Test func loopbackNamesWithTheListenersPortAreAccepted() {
        for host in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"] {
            #expect(loopback.accepts(host, port: 8080), "\(host)")
        }
    }

    @Test func foreignNamesAndOtherPortsAreRefused() {
        for host in ["evil.example:8080", "127.0.0.1:80", "127.0.0.1", "localhost", "127.0.0.1:8080.evil", "", ":8080"]
        {
            #expect(!loopback.accepts(host, port: 8080), "\(host)")
        }
    }

    @Test func theBoundAddressAndTheArrivalAddressAreAccepted() {
        let lan = ListenerAuthority(boundHost: "192.168.1.20")
        #expect(lan.accepts("192.168.1.20:9000", port: 9000))
        #expect(!lan.accepts("192.168.1.21:9000", port: 9000))
        let any = ListenerAuthority(boundHost: "0.0.0.0")
        #expect(!any.accepts("0.0.0.0:9000", port: 9000))
        #expect(any.accepts("10.0.0.5:9000", port: 9000, localAddress: "10.0.0.5"))
        #expect(any.accepts("[fe80::1]:9000", port: 9000, localAddress: "fe80::1"))
        #expect(!any.accepts("evil.example:9000", port: 9000, localAddress: "10.0.0.5"))
    }

    /// A client leaves the port out of `Host` when it is the scheme's default (RFC 9110 §7.2).
    @Test func aHostWithoutAPortNamesAListenerOnPort80() {
        for host in ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:80"] {
            #expect(loopback.accepts(host, port: 80), "\(host)")
        }
        #expect(!loopback.accepts("evil.example", port: 80))
        #expect(!loopback.accepts("127.0.0.1", port: 8080))
    }

    /// What an event loop may judge of a target at once, and what needs the resolver or the
    /// interfaces' addresses (left to a task): only names and other machines' numbers on the
    /// listener's own port.
    @Test(arguments: [
        ("http://example.com:8080/a", true), ("http://192.168.1.9:8080/a", true), ("http://localhost:8080/", true),
        ("http://127.0.0.1:8080/a", false), ("http://127.1:8080/a", false), ("http://[::1]:8080/a", false),
        ("http://0.0.0.0:8080/a", false), ("http://example.com:9090/a", false), ("http://example.com/a", false),
    ])
    func onlyANameOnTheListenersPortWaitsToBeJudged(url: String, waits: Bool) throws {
        let bound = ListenerAuthority.Bound()
        bound.bind(host: "127.0.0.1", port: 8080)
        #expect(bound.judgingWaits(try #require(URL(string: url))) == waits)
        #expect(!ListenerAuthority.Bound().judgingWaits(try #require(URL(string: url))), "nothing bound yet")
    }
}
