import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// One random life of a resource: a ``ResourceStateMachine`` driven by readers that come, read,
/// seek and leave at random moments, an origin that answers late, short, reset, ignores ranges or
/// changes its content, syncs that finish in any order, crashes that lose what was not durable,
/// and other processes that claim, fetch and record bytes in the same index, stream whole bodies,
/// store new versions and die. A naive model of the origin's
/// versions, the data files and the index checks every byte a reader gets and every rule.
struct ResourceSimulation {
    /// What a data file holds: per byte, the origin version it came from (`-1`: a hole,
    /// `-2`: garbage left by a crash) and the byte.
    struct DataFile {
        var version: [Int]
        var bytes: [UInt8]
        /// Bytes fetches of this session wrote (none twice).
        var fetched = ByteRangeSet()
        /// Bytes other processes wrote (none twice, none this session wrote).
        var foreignWritten = ByteRangeSet()
        init(length: Int) {
            version = Array(repeating: -1, count: length)
            bytes = Array(repeating: 0, count: length)
        }
        mutating func grow(to length: Int) {
            if version.count < length {
                version += Array(repeating: -1, count: length - version.count)
                bytes += Array(repeating: 0, count: length - bytes.count)
            }
        }
    }

    struct SimReader {
        let id: Int
        var position: Int64
        let end: Int64?
        var version: Int?
        var done = false
        var failed = false
    }

    struct SimFetch {
        let id: Int
        var request: ResourceStateMachine.FetchRequest?
        /// The body being read: the origin version, where the next body byte is, where it ends.
        var body: (version: Int, position: Int64, end: Int64)?
        /// The data file (record) it writes, fixed when its answer was accepted.
        var record: Int
        var ending = false
    }

    struct PendingSync {
        /// The fetch to remove once the batch is recorded (its last batch).
        let fetch: Int?
        /// The fetch whose bytes the batch holds.
        var of: Int? = nil
        let batch: ByteRangeSet
        let generation: Int
        let record: Int
        /// What the machine said to record once the batch was durable.
        var toRecord: ByteRangeSet?
    }

    var random: SeededRandom
    let seed: UInt64
    var now = ContinuousClock.now
    let settings: ResourceStateMachine.Settings
    var machine: ResourceStateMachine

    // The origin.
    var versions: [[UInt8]] = []
    var originVersion = 0

    // The disk: data files by record id, the index's row and ranges, durable bytes per record.
    var files: [Int: DataFile] = [:]
    var currentRecord = 0
    var indexInfo = ContentInfo()
    var indexRanges = ByteRangeSet()
    var durable: [Int: ByteRangeSet] = [:]
    /// The record each generation of the current machine writes.
    var recordOfGeneration: [Int: Int] = [0: 0]

    var readers: [SimReader] = []
    var fetches: [Int: SimFetch] = [:]
    var syncs: [PendingSync] = []
    var pendingValidation: ContentInfo?
    /// The origin's `max-age`, in seconds (0: every reuse is validated).
    var maxAge = 0
    /// The index's claims, of this process and of others.
    var claims: [SimClaim] = []
    var lastForeignFetch = 0
    /// Body bytes the origin sent, and those the machine charged to readers that took them.
    var originBytesSent: Int64 = 0
    var originBytesCharged: Int64 = 0
    var draining = false
    var steps = 0
    /// Whether a rule was broken (the simulation stops there).
    var broken = false
    /// The last events, formatted only when a rule breaks.
    var log: [(step: Int, text: () -> String)] = []

    /// - Parameter originUnmet: whether the engine has met no answer of the origin to a range
    ///   (``ResourceStateMachine/rangeSupport`` `unknown`), as for an origin's first resource.
    init(seed: UInt64, originUnmet: Bool = false) {
        self.seed = seed
        random = SeededRandom(seed: seed)
        var settings = ResourceStateMachine.Settings(CacheConfiguration())
        settings.joinDistance = 64
        settings.joinWait = .milliseconds(500)
        settings.firstFetchSpan = 128
        settings.maxFetchSpan = 1024
        // Some lives keep their fetches near their readers (a tool cutting a section).
        settings.fetchAheadLimit = random.chance(0.3) ? Int64.random(in: 64...1024, using: &random) : nil
        settings.syncBytes = 256
        settings.syncInterval = .seconds(1)
        settings.revalidationInterval = .milliseconds(Int64.random(in: 200...5000, using: &random))
        settings.refreshInterval = .seconds(1)
        settings.assertsInvariants = false
        self.settings = settings
        let length = Int.random(in: 1...3000, using: &random)
        maxAge = Int.random(in: 0...5, using: &random)
        versions = [Self.content(length: length, random: &random)]
        files[0] = DataFile(length: length)
        machine = ResourceStateMachine(
            info: ContentInfo(),
            recorded: ByteRangeSet(),
            freshUntil: nil,
            now: now,
            settings: settings
        )
        if originUnmet { machine.originRangesAre(.unknown) }
    }

    static func content(length: Int, random: inout SeededRandom) -> [UInt8] {
        TestData.bytes(count: length, seed: random.next())
    }

    var originBytes: [UInt8] { versions[originVersion] }
    func originInfo(_ version: Int) -> ContentInfo {
        ContentInfo(
            length: Int64(versions[version].count),
            contentType: "audio/mpeg",
            etag: "\"v\(version)\"",
            stored: StoredFields(fields: [HeaderField("Cache-Control", "max-age=\(maxAge)")], receivedAt: 1)
        )
    }

    /// Records a broken rule with the seed and the last events, so it can be replayed.
    ///
    /// - Returns: `false`, for `return fail(…)` in checks.
    @discardableResult
    mutating func fail(_ message: String) -> Bool {
        broken = true
        let events = log.suffix(25).map { "\($0.step): \($0.text())" }.joined(separator: "\n")
        Issue.record("seed \(seed), step \(steps): \(message)\nlast events:\n\(events)")
        return false
    }

    mutating func note(_ event: @escaping @autoclosure () -> String) {
        log.append((steps, event))
        if log.count > 60 { log.removeFirst(20) }
    }
}
