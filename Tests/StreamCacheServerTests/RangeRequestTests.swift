import StreamCache
import StreamCacheServer
import Testing

@Suite struct RangeRequestTests {
    let info = ContentInfo(length: 1000, etag: "\"v1\"", lastModified: "Sun, 22 Nov 2026 07:00:00 GMT")

    @Test(arguments: [
        ("bytes=0-0", ResponsePlan.partial(ByteRange(0, 1))),
        ("bytes=0-", .partial(ByteRange(0, 1000))),
        ("bytes=10-19", .partial(ByteRange(10, 20))),
        ("bytes=990-5000", .partial(ByteRange(990, 1000))),
        ("bytes=-100", .partial(ByteRange(900, 1000))),
        ("bytes=-5000", .partial(ByteRange(0, 1000))),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=99999999999999999999-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=5-1", .whole),
        ("bytes=abc", .whole),
        ("items=0-5", .whole),
        ("bytes=0-1,5-9", .whole),
    ])
    func planFollowsRFC9110(range: String, expected: ResponsePlan) {
        #expect(RangeRequest(range: range, ifRange: nil).plan(for: info) == expected, "\(range)")
    }

    @Test func noRangeOrUnknownLengthIsTheWholeBody() {
        #expect(RangeRequest(range: nil, ifRange: nil).plan(for: info) == .whole)
        #expect(RangeRequest(range: "bytes=0-9", ifRange: nil).plan(for: ContentInfo()) == .whole)
    }

    @Test func ifRangeHonoursTheRangeOnlyOnAStrongMatch() {
        let partial = ResponsePlan.partial(ByteRange(0, 10))
        #expect(RangeRequest(range: "bytes=0-9", ifRange: "\"v1\"").plan(for: info) == partial)
        #expect(RangeRequest(range: "bytes=0-9", ifRange: "\"v0\"").plan(for: info) == .whole)
        #expect(RangeRequest(range: "bytes=0-9", ifRange: "W/\"v1\"").plan(for: info) == .whole)
        #expect(RangeRequest(range: "bytes=0-9", ifRange: info.lastModified).plan(for: info) == partial)
        #expect(
            RangeRequest(range: "bytes=0-9", ifRange: "Sat, 21 Nov 2026 07:00:00 GMT").plan(for: info) == .whole
        )
        let weak = ContentInfo(length: 1000, etag: "W/\"v1\"")
        #expect(RangeRequest(range: "bytes=0-9", ifRange: "W/\"v1\"").plan(for: weak) == .whole)
    }

    @Test func readsStartBeforeTheLengthOnlyWhenTheyCan() {
        #expect(RangeRequest(range: nil, ifRange: nil).startBeforeLength! == (0, nil))
        #expect(RangeRequest(range: "bytes=10-19", ifRange: nil).startBeforeLength! == (10, 19))
        #expect(RangeRequest(range: "bytes=10-", ifRange: nil).startBeforeLength! == (10, nil))
        #expect(RangeRequest(range: "bytes=-10", ifRange: nil).startBeforeLength == nil)
        #expect(RangeRequest(range: "bytes=0-9", ifRange: "\"v1\"").startBeforeLength == nil)
        #expect(RangeRequest(range: "bytes=0-1,5-9", ifRange: nil).startBeforeLength == nil)
    }
}
