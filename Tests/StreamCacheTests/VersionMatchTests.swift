import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// What two descriptions of a resource prove about their bytes, and where a check samples them.
@Suite struct VersionMatchTests {
    static let date = "Mon, 01 Jan 2024 00:00:10 GMT"
    static let modified = "Mon, 01 Jan 2024 00:00:00 GMT"

    static func info(
        length: Int64 = 100,
        etag: String? = nil,
        lastModified: String? = nil,
        date: String? = nil
    ) -> ContentInfo {
        ContentInfo(
            length: length,
            etag: etag,
            lastModified: lastModified,
            stored: StoredFields(fields: date.map { [HeaderField("Date", $0)] } ?? [], receivedAt: 1)
        )
    }

    @Test func onlyAStrongValidatorProvesOneVersion() {
        let strong = Self.info(etag: "\"a\"")
        #expect(strong.match(Self.info(etag: "\"a\"")) == .same)
        #expect(strong.match(Self.info(length: 101, etag: "\"a\"")) == .different)
        // Another strong tag on the same length and date: retagged or replaced, the bytes tell.
        #expect(strong.match(Self.info(etag: "\"b\"")) == .unproven)
        #expect(
            Self.info(etag: "\"a\"", lastModified: Self.modified).match(
                Self.info(etag: "\"b\"", lastModified: Self.date)
            )
                == .different
        )
        #expect(strong.match(Self.info(etag: "\"b\"", lastModified: Self.modified)) == .different)
        #expect(strong.match(Self.info()) == .different)
        // Weak tags: another is another version; the same one proves no bytes.
        #expect(Self.info(etag: "W/\"a\"").match(Self.info(etag: "W/\"b\"")) == .different)
        #expect(Self.info(etag: "W/\"a\"").match(Self.info(etag: "W/\"a\"")) == .unproven)
        // No validators at all: only the bytes.
        #expect(Self.info().match(Self.info()) == .unproven)
        #expect(Self.info().match(Self.info(length: 99)) == .different)
        // Last-Modified proves only when the response came a second or more after it.
        let dated = Self.info(lastModified: Self.modified, date: Self.date)
        #expect(dated.hasStrongValidator)
        #expect(dated.match(Self.info(lastModified: Self.modified, date: Self.date)) == .same)
        #expect(Self.info(lastModified: Self.modified).match(Self.info(lastModified: Self.modified)) == .unproven)
        let sameSecond = Self.info(lastModified: Self.modified, date: Self.modified)
        #expect(!sameSecond.hasStrongValidator)
        #expect(sameSecond.match(sameSecond) == .unproven)
        #expect(dated.match(Self.info(lastModified: Self.date, date: Self.date)) == .different)
    }

    /// Samples lie in the cached bytes, in order, apart; the first starts at the first cached
    /// byte; a small file is compared whole; a large one has its last cached bytes sampled.
    @Test func samplesAreSpreadOverWhatIsCached() {
        for seed in 0..<200 {
            var random = SeededRandom(seed: UInt64(seed))
            var cached = ByteRangeSet()
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let start = Int64.random(in: 0..<4_000_000, using: &random)
                cached.insert(ByteRange(start, start + Int64.random(in: 1...900_000, using: &random)))
            }
            let samples = VersionSamples(of: cached)
            let all = [samples.first] + samples.spread
            #expect(samples.first.lowerBound == cached.ranges[0].lowerBound, "seed \(seed)")
            #expect(all.allSatisfy { !$0.isEmpty && cached.contains($0) }, "seed \(seed)")
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.upperBound <= $1.lowerBound }, "seed \(seed)")
            #expect(samples.spread.count <= VersionSamples.spreadCount, "seed \(seed)")
            let last = cached.ranges[cached.ranges.count - 1].upperBound
            if cached.count <= VersionSamples.firstSpan, cached.ranges.count == 1 {
                #expect(samples.first == cached.ranges[0] && samples.spread.isEmpty, "seed \(seed)")
            }
            if cached.count > VersionSamples.firstSpan + VersionSamples.spreadSpan * 3 {
                #expect(all.last?.upperBound == last, "seed \(seed): the last cached bytes are not sampled")
            }
        }
    }
}

/// The machine joins ranges to cached bytes only by a strong validator or the bytes its request
/// asked for again; an answer it cannot prove never joins them.
@Suite struct ByteProofMachineTests {
    /// Fresh for an hour from now: no check comes between the reads.
    static let fresh = StoredFields(
        fields: [HeaderField("Cache-Control", "max-age=3600")],
        receivedAt: Date().timeIntervalSince1970
    )

    static func info(etag: String? = nil) -> ContentInfo {
        ContentInfo(length: 10_000, etag: etag, stored: fresh)
    }

    /// A machine that has written `[0, 1000)` of a 10,000-byte resource described by `info`,
    /// with a reader at byte 1000, and the request that reader's read starts.
    static func machineWithCachedStart(
        _ info: ContentInfo
    ) -> (ResourceStateMachine, reader: Int, request: ResourceStateMachine.FetchRequest)? {
        var machine = ResourceStateMachine.ofNewResource(firstFetchSpan: 1000)
        guard let first = machine.startFirstFetch() else { return nil }
        _ = machine.answered(
            first.fetch,
            .partial(range: ByteRange(0, 1000), info: info),
            sentIfRange: false,
            now: .now
        )
        _ = machine.received(first.fetch, count: 1000, now: .now)
        _ = machine.wrote(first.fetch, now: .now)
        _ = machine.endFetch(first.fetch, error: nil)
        machine.removeFetch(first.fetch)
        let reader = machine.addReader(offset: 1000, end: nil)
        guard case .startFetch(let request) = machine.read(reader, at: 1000, now: .now) else {
            Issue.record("no fetch for the gap")
            return nil
        }
        return (machine, reader, request)
    }

    @Test func aGapWithoutAStrongValidatorAsksForCachedBytesBeforeIt() {
        guard let (_, _, request) = Self.machineWithCachedStart(Self.info()) else { return }
        #expect(request.first == 1000 && request.proof == 1000 && request.askedFirst == 0)
        guard let (_, _, strong) = Self.machineWithCachedStart(Self.info(etag: "\"a\"")) else {
            return
        }
        #expect(strong.proof == 0 && strong.ifRange == "\"a\"")
    }

    @Test func anAnswerJoinsOnlyAsItsBytesProve() {
        let bare = Self.info()
        // Proven: the bytes join, the version stands.
        guard var (proven, _, request) = Self.machineWithCachedStart(bare) else { return }
        let generation = proven.generation
        let joined = proven.answered(
            request.fetch,
            .partial(range: ByteRange(1000, 2000), info: bare),
            sentIfRange: false,
            proven: true,
            now: .now
        )
        #expect(joined.readBody && joined.replaceVersion == nil && proven.generation == generation)

        // Unproven, no tags: the reader reads on from the origin, nothing joins the cache.
        guard var (unproven, reader, again) = Self.machineWithCachedStart(bare) else { return }
        let refused = unproven.answered(
            again.fetch,
            .partial(range: ByteRange(1000, 2000), info: bare),
            sentIfRange: false,
            now: .now
        )
        #expect(!refused.readBody && refused.replaceVersion == nil)
        guard case .passThrough = unproven.read(reader, at: 1000, now: .now) else {
            Issue.record("the reader of an unproven answer was not sent to the origin")
            return
        }

        // Another strong tag on the same length, unproven: a version of its own.
        guard var (tagged, _, tagRequest) = Self.machineWithCachedStart(Self.info(etag: "\"a\""))
        else { return }
        let retagged = tagged.answered(
            tagRequest.fetch,
            .partial(range: ByteRange(1000, 2000), info: Self.info(etag: "\"b\"")),
            sentIfRange: true,
            now: .now
        )
        #expect(retagged.replaceVersion?.etag == "\"b\"")
        // Proven under the new tag: the version takes it, and its tags prove nothing from then on.
        guard var (rotating, _, rotatingRequest) = Self.machineWithCachedStart(Self.info(etag: "\"a\""))
        else { return }
        let kept = rotating.answered(
            rotatingRequest.fetch,
            .partial(range: ByteRange(1000, 2000), info: Self.info(etag: "\"c\"")),
            sentIfRange: true,
            proven: true,
            now: .now
        )
        #expect(kept.replaceVersion == nil && rotating.info.etag == "\"c\"" && rotating.tagsRotate)
        #expect(rotating.proof(before: 1000) == 1000 && rotating.ifRangeToSend == nil)
    }
}
