import Foundation
import StreamCacheTesting
import Testing

/// The generated corpus of hostile manifests (`Tests/Fixtures/hostile_documents.py`) at 1, 4 and
/// 16 MiB, read by `streamcache hls inspect` as a user would: each shape is read whole, or refused
/// by the bound it meets, at every size, in peak memory within a budget linear in the document's
/// size, and in processor time per MiB at 16 MiB within a few times that at 1 MiB (a reader
/// quadratic in a document takes 15 times as long per MiB there). Processor time, not the clock,
/// so that tests running beside it change little; `bench/hostile-parse.sh` prints the figures.
@Suite(.timeLimit(.minutes(10)), .enabled(if: LinuxTools.gnuTime, "needs GNU time (Debian's `time`)"))
struct HostileDocumentCorpusTests {
    /// A shape, and the bound that refuses it from a size on.
    struct Shape: Sendable, CustomTestStringConvertible {
        let name: String
        /// What the refusal says, and the smallest size in MiB it is refused at; `nil`: read at every size.
        var refusal: (message: String, fromMiB: Int)?
        var testDescription: String { name }
    }

    static let shapes = [
        // One text of `&amp;` pieces a MiB long: each piece is gathered into the text once.
        Shape(name: "entities"),
        // Elements of 900 attributes, under the 1,000 an element may have.
        Shape(name: "attributes"),
        // Representations counted over the whole document before any is worked out.
        Shape(name: "representations", refusal: ("more than the 10000 one may have", 1)),
        // Lines counted before the playlist is kept: 80,000 one-character segments in a MiB.
        Shape(name: "segments", refusal: ("more than 250000 lines", 4)),
        // Long `EXT-X-DATERANGE` tags of 100 attributes each.
        Shape(name: "tags"),
    ]

    /// The peak resident memory a document may cost `hls inspect`: what the process needs with
    /// nothing to read, and a constant factor of the document's size.
    static func memoryBudget(mib: Int) -> Int { (64 + 24 * mib) << 20 }

    /// How many times the processor time per MiB of the smallest document the largest may take.
    static let timeGrowth = 4.0

    @Test(arguments: shapes) func eachSizeIsReadOrRefusedWithinItsBudget(shape: Shape) async throws {
        let folder = TestData.temporaryDirectory("corpus")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let generator = Fixtures.path("hostile_documents.py")
        var secondsPerMiB: [Int: Double] = [:]
        for mib in [1, 4, 16] {
            let document = "\(folder)/\(shape.name)-\(mib)"
            let generated = ChildProcess()
            generated.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            generated.arguments = ["python3", generator, shape.name, String(mib), document]
            #expect(try await generated.runToCompletion(timeout: .seconds(60)).status == 0)

            // GNU time writes the processor seconds (user, system) and the peak resident set (KiB)
            // of `hls inspect` to a file of its own.
            let usage = "\(folder)/usage"
            let inspect = ChildProcess()
            inspect.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            inspect.arguments = ["-f", "%U %S %M", "-o", usage, CLI.binary, "hls", "inspect", document]
            var environment = ProcessInfo.processInfo.environment
            environment["STREAMCACHE_DIR"] = folder + "/cache"
            environment["STREAMCACHE_LIBRARY"] = folder + "/library"
            inspect.environment = environment
            let result = try await inspect.runToCompletion(timeout: .seconds(240))
            #expect(!result.timedOut, "\(shape.name) at \(mib) MiB was still being read after 240 s")

            if let refusal = shape.refusal, mib >= refusal.fromMiB {
                #expect(result.status == 1, "\(shape.name) at \(mib) MiB: \(result.stderr)")
                #expect(result.stderr.contains(refusal.message), "\(shape.name) at \(mib) MiB: \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            } else {
                #expect(result.status == 0, "\(shape.name) at \(mib) MiB: \(result.stderr)")
                #expect(!result.output.isEmpty)
            }
            let fields =
                try String(contentsOfFile: usage, encoding: .utf8).split(separator: "\n").last?
                .split(separator: " ").compactMap { Double($0) } ?? []
            try #require(fields.count == 3, "no usage for \(shape.name) at \(mib) MiB")
            secondsPerMiB[mib] = (fields[0] + fields[1]) / Double(mib)
            let bytes = Int(fields[2]) * 1024
            #expect(
                bytes <= Self.memoryBudget(mib: mib),
                "\(shape.name) at \(mib) MiB took \(bytes >> 20) MiB, past \(Self.memoryBudget(mib: mib) >> 20) MiB"
            )
        }
        let smallest = try #require(secondsPerMiB[1])
        let largest = try #require(secondsPerMiB[16])
        #expect(
            largest <= Self.timeGrowth * max(smallest, 0.05),
            "\(shape.name): \(largest) processor seconds per MiB at 16 MiB, \(smallest) at 1 MiB"
        )
    }
}
