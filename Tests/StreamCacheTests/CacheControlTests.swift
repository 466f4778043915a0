import Foundation
import Testing

@testable import StreamCache

/// `Cache-Control`, HTTP dates, `Age` and freshness (RFC 9111 §4.2, §5) on what origins send,
/// odd and broken values included.
@Suite struct CacheControlTests {
    @Test(arguments: [
        ("max-age=60", Int64?(60)),
        ("max-age=60, max-age=30", 30),
        ("MAX-AGE=\"120\"", 120),
        ("max-age=-1", 0),
        ("max-age=abc", 0),
        ("max-age", 0),
        ("max-age=99999999999999999999999", 1 << 31),
        (", , max-age=10 ,", 10),
        ("foo=\"a, max-age=5\", bar", nil),
        ("no-store,,private", nil),
        ("\tmax-age=5\t", 5),
        ("max-age=\"6\\0\"", 60),
        ("max-age = 60", 0),
        ("max-age=\u{663}", 0),
        ("Ünknown=1, max-age=7", 7),
    ])
    func maxAge(field: String, expected: Int64?) {
        #expect(CacheControl(fields: [field]).maxAge == expected, "\(field)")
    }

    @Test func directivesAcrossFieldsAndUnknownOnes() {
        let control = CacheControl(fields: ["no-cache=\"Set-Cookie\", x-custom", "MUST-REVALIDATE", "no-store"])
        #expect(control.noCache && control.mustRevalidate && control.noStore)
        #expect(control.other == ["x-custom"])
    }

    static let received = 1_700_000_000.0
    static let date = "Tue, 14 Nov 2023 22:13:20 GMT"  // received, to the second

    func lifetime(_ fields: [(String, String)]) -> Double {
        StoredFields(fields: fields.map { HeaderField($0.0, $0.1) }, receivedAt: Self.received)
            .freshnessLifetime(heuristicLimit: 86400)
    }

    @Test func expiresDatesAndTheHeuristic() {
        #expect(lifetime([("Date", Self.date), ("Expires", "0")]) == 0)
        #expect(lifetime([("Date", Self.date), ("Expires", "not a date")]) == 0)
        #expect(lifetime([("Date", Self.date), ("Expires", "Thu, 01 Jan 2015 00:00:00 GMT")]) == 0)
        #expect(lifetime([("Date", Self.date), ("Expires", "Tue, 14 Nov 2023 23:13:20 GMT")]) == 3600)
        // RFC 850 and asctime forms are read too.
        #expect(lifetime([("Date", Self.date), ("Expires", "Tuesday, 14-Nov-23 23:13:20 GMT")]) == 3600)
        #expect(lifetime([("Date", Self.date), ("Expires", "Tue Nov 14 23:13:20 2023")]) == 3600)
        // Two Expires fields: invalid, so in the past.
        #expect(lifetime([("Expires", "Tue, 14 Nov 2023 23:13:20 GMT"), ("Expires", "0")]) == 0)
        // max-age wins over Expires.
        #expect(lifetime([("Cache-Control", "max-age=10"), ("Expires", "Fri, 01 Jan 2100 00:00:00 GMT")]) == 10)
        // A tenth of the time since Last-Modified, at most the limit.
        #expect(lifetime([("Date", Self.date), ("Last-Modified", "Tue, 14 Nov 2023 12:13:20 GMT")]) == 3600)
        #expect(lifetime([("Date", Self.date), ("Last-Modified", "Thu, 01 Jan 2015 00:00:00 GMT")]) == 86400)
        #expect(lifetime([("ETag", "\"only\"")]) == 0)
    }

    @Test func ageFromTheFieldAndTheClock() {
        let fields = { (age: String) in
            StoredFields(fields: [HeaderField("Date", Self.date), HeaderField("Age", age)], receivedAt: Self.received)
        }
        #expect(fields("120").age(at: Self.received + 30) == 150)
        #expect(fields("abc").age(at: Self.received + 30) == 30, "an Age that is not a number is ignored")
        #expect(fields("-5").age(at: Self.received) == 0)
        // A Date behind the clock at receipt counts as age already.
        let late = StoredFields(fields: [HeaderField("Date", Self.date)], receivedAt: Self.received + 40)
        #expect(late.age(at: Self.received + 40) == 40)
        let stale = StoredFields(
            fields: [HeaderField("Cache-Control", "max-age=60"), HeaderField("Age", "120")],
            receivedAt: Self.received
        )
        #expect(stale.remainingFreshness(at: Self.received, heuristicLimit: 86400) < 0)
    }

    @Test func varyAndWhatIsNotStoredOrReplayed() {
        let stored = StoredFields(
            fields: [
                HeaderField("Vary", "Accept-Language, *"), HeaderField("Set-Cookie", "a=1"),
                HeaderField("Connection", "close"), HeaderField("Content-Length", "10"), HeaderField("X-Kept", "yes"),
            ],
            receivedAt: Self.received
        )
        #expect(stored.vary == ["accept-language", "*"])
        #expect(stored.values("Set-Cookie").isEmpty && stored.values("Connection").isEmpty)
        #expect(stored.value("X-Kept") == "yes")
    }

    @Test func a304UpdatesTheFieldsItCarries() {
        let stored = StoredFields(
            fields: [HeaderField("Cache-Control", "max-age=10"), HeaderField("X-Kept", "old")],
            receivedAt: Self.received
        )
        let updated = stored.updated(with: [HeaderField("Cache-Control", "max-age=600")], receivedAt: Self.received + 5)
        #expect(updated.cacheControl.maxAge == 600 && updated.value("X-Kept") == "old")
        #expect(updated.receivedAt == Self.received + 5)
    }
}
