import Foundation
import Testing

@testable import StreamCache

/// A shared cache's duties (RFC 9111, RFC 9213) apply to a shared cache only, and a private one
/// reads the same response as before.
@Suite struct SharedCacheRulesTests {
    static func stored(_ fields: [(String, String)]) -> StoredFields {
        StoredFields(fields: fields.map { HeaderField($0.0, $0.1) }, receivedAt: 1000)
    }

    @Test func sharedDirectivesApplyToASharedCacheOnly() {
        let sMaxAge = Self.stored([("Cache-Control", "max-age=10, s-maxage=500")])
        #expect(sMaxAge.freshnessLifetime(heuristicLimit: 0, shared: false) == 10)
        #expect(sMaxAge.freshnessLifetime(heuristicLimit: 0, shared: true) == 500)
        #expect(
            sMaxAge.cacheControl(shared: true).mustRevalidate && !sMaxAge.cacheControl(shared: false).mustRevalidate
        )

        let privateOne = Self.stored([("Cache-Control", "private, max-age=60")])
        #expect(privateOne.cacheControl(shared: true).noStore && !privateOne.cacheControl(shared: false).noStore)

        let proxy = Self.stored([("Cache-Control", "max-age=60, proxy-revalidate")])
        #expect(proxy.cacheControl(shared: true).mustRevalidate && !proxy.cacheControl(shared: false).mustRevalidate)
    }

    @Test func aValidCDNCacheControlStandsForCacheControlInASharedCache() {
        let targeted = Self.stored([("Cache-Control", "no-store"), ("CDN-Cache-Control", "max-age=600")])
        #expect(!targeted.cacheControl(shared: true).noStore)
        #expect(targeted.freshnessLifetime(heuristicLimit: 0, shared: true) == 600)
        #expect(targeted.cacheControl(shared: false).noStore)
        #expect(Self.stored([("CDN-Cache-Control", "private")]).cacheControl(shared: true).noStore)
        // Not a Structured Field dictionary: ignored whole, Cache-Control decides.
        for invalid in ["max-age=600, &&&&&", "MaX-aGe=600", "max-age =600", "max-age= 600"] {
            let fields = Self.stored([("Cache-Control", "max-age=5"), ("CDN-Cache-Control", invalid)])
            #expect(fields.freshnessLifetime(heuristicLimit: 0, shared: true) == 5, "\(invalid)")
        }
        // A directive of the wrong type is ignored alone.
        let wrongType = Self.stored([("Cache-Control", "max-age=5"), ("CDN-Cache-Control", "max-age=\"600\"")])
        #expect(wrongType.freshnessLifetime(heuristicLimit: 0, shared: true) == 0)
    }

    @Test func anAgeListInOneLineIsReadByItsFirstMember() {
        let old = Self.stored([("Date", "Thu, 01 Jan 1970 00:16:40 GMT"), ("Age", "7200, 0")])
        #expect(old.age(at: 1000) == 7200)
        let young = Self.stored([("Date", "Thu, 01 Jan 1970 00:16:40 GMT"), ("Age", "0, 7200")])
        #expect(young.age(at: 1000) == 0)
    }
}
