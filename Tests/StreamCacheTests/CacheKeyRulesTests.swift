import Foundation
import Testing

@testable import StreamCache

/// What a key rule leaves out of a URL, and what it keeps as it was.
@Suite struct CacheKeyRulesTests {
    static func key(_ url: String, _ rules: [String]) throws -> String {
        var configuration = CacheConfiguration()
        configuration.keyRules = try CacheKeyRules(parsing: rules)
        return configuration.cacheKey(URL(string: url)!)
    }

    @Test func namedParametersLeaveTheKeyAndTheRestStayInOrderAndSpelling() throws {
        #expect(
            try Self.key("http://cdn.example.com/ep.mp3?b=2&Expires=9&a=%20x&signature=S", ["Expires,Signature"])
                == "http://cdn.example.com/ep.mp3?b=2&a=%20x"
        )
        #expect(
            try Self.key("http://cdn.example.com/ep.mp3?Expires=9&Signature=S", ["Expires,Signature"])
                == "http://cdn.example.com/ep.mp3"
        )
        // A name written with percent-encoding is the same name.
        #expect(try Self.key("http://h/ep.mp3?%74oken=1&id=7", ["token"]) == "http://h/ep.mp3?id=7")
        // No rule, no change; a parameter whose name only starts with a ruled one stays.
        #expect(try Self.key("http://h/ep.mp3?tokens=1", ["token"]) == "http://h/ep.mp3?tokens=1")
        #expect(try Self.key("http://H/ep.mp3?token=1", []) == "http://h/ep.mp3?token=1")
    }

    @Test func aHostsRuleHoldsForThatHostOnly() throws {
        let rules = ["cdn.example.com=token"]
        #expect(try Self.key("https://CDN.example.com/a.ts?token=1", rules) == "https://cdn.example.com/a.ts")
        #expect(
            try Self.key("https://other.example.com/a.ts?token=1", rules) == "https://other.example.com/a.ts?token=1"
        )
    }

    @Test func thePresetNamesTheSigningParametersOfTheCommonCDNs() throws {
        let signed =
            "https://b.s3.amazonaws.com/ep.mp3?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=c"
            + "&X-Amz-Date=20261127T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=abc"
        #expect(try Self.key(signed, ["signed-cdn"]) == "https://b.s3.amazonaws.com/ep.mp3")
        #expect(
            try Self.key("https://a.example/ep.mp3?hdnts=exp=1~hmac=2", ["signed-cdn"]) == "https://a.example/ep.mp3"
        )
    }

    @Test(arguments: ["", "=", "a,,b", "https://h=t", "h:443=t", "*", "a*", "signed-nope", "h="])
    func badRulesAreRefused(rule: String) {
        #expect(throws: CacheKeyRules.InvalidRule.self) { try CacheKeyRules.parseRule(rule) }
    }
}

/// Rules that were accepted and never matched: a preset in other case, a host that is no
/// URL's; and a cookie domain that took in an IP address.
@Suite struct RuleAndCookieScopeTests {
    @Test func aPresetInOtherCaseIsThePresetAndANonASCIIHostIsRefused() throws {
        let rule = try CacheKeyRules.parseRule("signed-CDN")
        #expect(rule.parameters == CacheKeyRules.presets["signed-cdn"])
        #expect(throws: CacheKeyRules.InvalidRule.self) { try CacheKeyRules.parseRule("exämple.com=x") }
        // A parameter whose name has capitals and hyphens stays a parameter.
        #expect(try CacheKeyRules.parseRule("X-Amz-Date").parameters == ["X-Amz-Date"])
    }

    @Test func aDomainCookieIsNeverSentToAnIPAddress() throws {
        let url = URL(string: "http://127.0.0.1:8080/a")!
        let cookies = try OriginCookie.parseNetscape(
            "#HttpOnly_.0.0.1\tTRUE\t/\tFALSE\t0\ta\t1\n.example.com\tTRUE\t/\tFALSE\t0\tb\t2\n"
        )
        #expect(!cookies.contains { $0.matches(url, sameOrigin: true) })
        #expect(cookies.contains { $0.matches(URL(string: "http://cdn.example.com/a")!, sameOrigin: false) })
    }
}
