import Foundation
import StreamCacheTesting
import Testing

/// `streamcache get` and friends, run as separate processes against a separate origin process.
@Suite(.serialized, .timeLimit(.minutes(5))) struct GetCommandTests {
    @Test func separateProcessesFetchEachByteOnce() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 6_000_000, seed: 30)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let ranges = [
            (2_000_000, 2_999_999), (0, 99), (2_500_000, 4_499_999), (5_999_000, 5_999_999), (50, 2_100_000),
            (1_000, 5_999_500),
        ]
        for (index, (first, last)) in ranges.enumerated() {
            let output = workspace.output("part\(index)")
            let result = try await CLI.run(
                ["get", origin.url("ep.mp3"), "--range", "\(first)-\(last)", "-o", output],
                cacheDir: workspace.cacheDirectory
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.read(output) == Array(data[first...last]))
        }
        let whole = try await CLI.run(["get", origin.url("ep.mp3")], cacheDir: workspace.cacheDirectory)
        #expect([UInt8](whole.stdout) == data)
        let stats = try await origin.stats()
        #expect(stats.duplicateBytes == 0)
        #expect(stats.bodyBytes == Int64(data.count))
    }

    @Test func killedGetsLeaveACacheWithOnlyCorrectBytes() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 24 << 20, seed: 31)
        try workspace.write(data, as: "video.mp4")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "24M"])
        var random = SystemRandomNumberGenerator()
        var starts: [Int] = []
        for round in 0..<12 {
            let first = Int.random(in: 0..<(20 << 20), using: &random)
            starts.append(first)
            let (process, _, _) = try CLI.start(
                ["get", origin.url("video.mp4"), "--range", "\(first)-", "-o", workspace.output("killed\(round)")],
                cacheDir: workspace.cacheDirectory
            )
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...700, using: &random)))
            // Only a process not yet reaped: its pid may belong to another one after.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try await onOwnThread { process.waitUntilExit() }
        }
        let list = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        #expect(list.status == 0)
        #expect((try? JSONSerialization.jsonObject(with: list.stdout)) != nil)
        let result = try await CLI.run(
            ["get", origin.url("video.mp4"), "-o", workspace.output("all")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(workspace.read(workspace.output("all")) == data)
        // A killed run leaves no output file under its name; one that finished before the kill
        // left the complete, correct range.
        for (round, first) in starts.enumerated() {
            if let bytes = workspace.read(workspace.output("killed\(round)")) {
                #expect(bytes == Array(data[first...]))
            }
        }
    }

    @Test(arguments: [false, true])
    func aReplacedFileIsServedNew(sameLength: Bool) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let old = TestData.bytes(count: 2_000_000, seed: 32)
        let new = TestData.bytes(count: sameLength ? 2_000_000 : 2_500_000, seed: 33)
        try workspace.write(old, as: "ep.mp3")
        // Modified "later" than the origin's clock: no heuristic freshness (RFC 9111 §4.2.2),
        // which a second boundary crossed between the write and the first get would give, so
        // every reuse is checked and the replacement is seen at once.
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(3600)],
            ofItemAtPath: workspace.originDirectory + "/ep.mp3"
        )
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let first = try await CLI.run(["get", origin.url("ep.mp3")], cacheDir: workspace.cacheDirectory)
        #expect([UInt8](first.stdout) == old)
        try workspace.write(new, as: "ep.mp3")
        let partial = try await CLI.run(
            ["get", origin.url("ep.mp3"), "--range", "100-999999"],
            cacheDir: workspace.cacheDirectory
        )
        let partialIsNew = [UInt8](partial.stdout) == Array(new[100...999_999])
        #expect(partialIsNew, "\(partial.stdout.count) bytes; \(partial.stderr)")
        let whole = try await CLI.run(["get", origin.url("ep.mp3")], cacheDir: workspace.cacheDirectory)
        let wholeIsNew = [UInt8](whole.stdout) == new
        #expect(wholeIsNew, "\(whole.stdout.count) bytes; \(whole.stderr)")
    }

    @Test(arguments: [
        "ignore-range", "wrong-range-start", "short-body", "reset-after=300000", "status=500", "changing-etag",
        "no-validators",
    ])
    func misbehavingOriginsGiveRightBytesOrACleanFailure(fault: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 1_500_000, seed: 34)
        try workspace.write(data, as: "ep.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--fault", fault])
        let output = workspace.output("ep.mp3")
        let result = try await CLI.run(
            ["get", origin.url("ep.mp3"), "--range", "1000-1200999", "-o", output],
            cacheDir: workspace.cacheDirectory
        )
        if result.status == 0 {
            #expect(workspace.read(output) == Array(data[1000...1_200_999]))
        } else {
            #expect(result.stderr.hasPrefix("streamcache: error: "))
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output), "a failed get left an output file")
        }
        // Whatever got cached is right: a healthy origin on the same files completes it.
        let healthy = try await OriginProcess(directory: workspace.originDirectory)
        _ = healthy
        let check = try await CLI.run(
            ["get", origin.url("ep.mp3").replacingOccurrences(of: "\(origin.port)", with: "\(healthy.port)")],
            cacheDir: workspace.cacheDirectory
        )
        #expect([UInt8](check.stdout) == data)
    }

    @Test func processesOpeningANewCacheDirectoryAtOnceAllSucceed() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        for round in 0..<12 {
            let directory = workspace.output("cache-\(round)")
            let results = try await withThrowingTaskGroup(of: ProcessResult.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await CLI.run(["ls", "--json"], cacheDir: directory) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for result in results {
                #expect(result.status == 0, "round \(round): \(result.stderr)")
            }
        }
    }

    @Test func processesSharingACacheNeverSeeAWrongByte() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let files = Dictionary(
            uniqueKeysWithValues: (0..<3).map { index in
                ("f\(index).bin", TestData.bytes(count: 3_000_000 + index * 100_000, seed: UInt64(40 + index)))
            }
        )
        for (name, bytes) in files { try workspace.write(bytes, as: name) }
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "50M"])
        let base = origin.url("")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    for step in 0..<6 {
                        let name = "f\((worker + step) % 3).bin"
                        let expected = files[name]!
                        switch (worker + step) % 4 {
                        case 0:
                            let first = (worker * 310_000 + step * 170_000) % 2_000_000
                            let result = try await CLI.run(
                                ["get", base + name, "--range", "\(first)-\(first + 700_000)"],
                                cacheDir: workspace.cacheDirectory,
                                timeout: .seconds(30)
                            )
                            #expect(!result.timedOut, "get hung: \(result.stderr)")
                            if result.status == 0 {
                                #expect([UInt8](result.stdout) == Array(expected[first...first + 700_000]))
                            }
                        case 1:
                            let output = workspace.output("export-\(worker)-\(step)")
                            let result = try await CLI.run(
                                ["export", base + name, output],
                                cacheDir: workspace.cacheDirectory,
                                timeout: .seconds(30)
                            )
                            #expect(!result.timedOut, "export hung: \(result.stderr)")
                            if result.status == 0 { #expect(workspace.read(output) == expected) }
                        case 2:
                            let removed = try await CLI.run(
                                ["rm", base + name],
                                cacheDir: workspace.cacheDirectory,
                                timeout: .seconds(30)
                            )
                            #expect(!removed.timedOut, "rm hung: \(removed.stderr)")
                        default:
                            let list = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
                            #expect(list.status == 0, "\(list.stderr)")
                            #expect((try? JSONSerialization.jsonObject(with: list.stdout)) != nil)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        for (name, expected) in files {
            let result = try await CLI.run(["get", origin.url(name)], cacheDir: workspace.cacheDirectory)
            #expect(result.status == 0, "\(result.stderr)")
            #expect([UInt8](result.stdout) == expected)
        }
        let check = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory)
        #expect(check.status == 0)
    }
}
