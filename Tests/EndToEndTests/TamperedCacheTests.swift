import Foundation
import StreamCacheTesting
import Testing

/// A cache directory others can reach, or whose files were changed behind StreamCache's back:
/// never a dead end, never an origin byte written outside the cache.
@Suite(.timeLimit(.minutes(3))) struct TamperedCacheTests {
    private func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0) & 0o777
    }

    @Test func aDirectoryOpenToOthersIsTightenedOrRefused() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 1000, seed: 12), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        // An empty directory (as `mkdir` leaves it, under a umask of 0): made the user's alone.
        chmod(workspace.cacheDirectory, 0o777)
        let got = try await CLI.run(
            ["get", origin.url("a.bin"), "-o", workspace.output("a")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(got.status == 0, "\(got.stderr)")
        #expect(mode(workspace.cacheDirectory) == 0o700 && mode(workspace.cacheDirectory + "/data") == 0o700)
        // A directory that holds other things (`/tmp`, a home folder): refused, left as it was.
        let shared = workspace.outputDirectory + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: shared + "/notes.txt"))
        chmod(shared, 0o777)
        let refused = try await CLI.run(["get", origin.url("a.bin"), "-o", workspace.output("b")], cacheDir: shared)
        #expect(refused.status != 0)
        #expect(
            refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains("other users"),
            "\(refused.stderr)"
        )
        #expect(mode(shared) == 0o777)
    }

    @Test func aLinkPlantedInTheDataFolderIsNeverWrittenThrough() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 300_000, seed: 13)
        try workspace.write(data, as: "a.bin")
        try workspace.write(data, as: "b.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let first = try await CLI.run(
            ["get", origin.url("a.bin"), "-o", workspace.output("a")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(first.status == 0, "\(first.stderr)")
        // The next resource's data file will be data/2: a link to a file of the user's.
        let victim = workspace.output("victim.txt")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        symlink(victim, workspace.cacheDirectory + "/data/2")
        let second = try await CLI.run(
            ["get", origin.url("b.bin"), "-o", workspace.output("b")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(second.status == 0, "\(second.stderr)")
        let same = workspace.read(workspace.output("b")) == data
        #expect(same, "wrong bytes")
        let untouched = workspace.read(victim) == Array("precious".utf8)
        #expect(untouched, "the origin's bytes were written through the link")
    }

    @Test func aDamagedIndexIsMovedAsideAndTheCacheStartsAfresh() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 300_000, seed: 14)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let index = workspace.cacheDirectory + "/index.sqlite"
        let damages: [(String, () throws -> Void)] = [
            ("garbage", { try Data(TestData.bytes(count: 5000, seed: 15)).write(to: URL(fileURLWithPath: index)) }),
            ("truncated", { #expect(truncate(index, 100) == 0) }),
        ]
        for (name, damage) in damages {
            let fill = try await CLI.run(
                ["get", origin.url("a.bin"), "-o", workspace.output("a")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(fill.status == 0, "\(name): \(fill.stderr)")
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index + suffix) }
            try damage()
            let got = try await CLI.run(
                ["get", origin.url("a.bin"), "-o", workspace.output("b")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(name): \(got.stderr)")
            let same = workspace.read(workspace.output("b")) == data
            #expect(same, "\(name): wrong bytes")
            let warnings = got.stderr.split(separator: "\n").filter { $0.contains("warning:") }
            #expect(warnings.count == 1 && got.stderr.contains("moved it to"), "\(name): \(got.stderr)")
            let listed = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory)
            #expect(listed.status == 0 && listed.output.contains("a.bin"), "\(name): \(listed.stderr)")
        }
        let aside = try FileManager.default.contentsOfDirectory(atPath: workspace.cacheDirectory).filter {
            $0.hasPrefix("index.sqlite.damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
        }
        #expect(aside.count == 2, "\(aside)")
        // `ls` alone meets a damaged index too.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index + suffix) }
        try Data(TestData.bytes(count: 5000, seed: 16)).write(to: URL(fileURLWithPath: index))
        let listed = try await CLI.run(["ls"], cacheDir: workspace.cacheDirectory)
        #expect(listed.status == 0 && listed.stderr.contains("moved it to"), "\(listed.stderr)")
    }

    /// Bytes of a data file overwritten with zeros: found by their checksums when the file is
    /// next opened (its time changed), or by `verify` (its time put back), and fetched again.
    @Test func overwrittenBytesAreFoundByTheirChecksumsAndFetchedAgain() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 5_000_000, seed: 17)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        func get() async throws -> Bool {
            let got = try await CLI.run(
                ["get", origin.url("a.bin"), "-o", workspace.output("a")],
                cacheDir: workspace.cacheDirectory
            )
            #expect(got.status == 0, "\(got.stderr)")
            return workspace.read(workspace.output("a")) == data
        }
        func zero(_ offset: Int64, keepingTime: Bool) throws {
            let file = try #require(workspace.dataFiles().first)
            let before = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
            let handle = try #require(FileHandle(forUpdatingAtPath: file))
            try handle.seek(toOffset: UInt64(offset))
            handle.write(Data(count: 50_000))
            try handle.close()
            if keepingTime, let before {
                try FileManager.default.setAttributes([.modificationDate: before], ofItemAtPath: file)
            }
        }
        #expect(try await get())
        try zero(1_500_000, keepingTime: false)
        #expect(try await get(), "zeros were served after the file changed")

        try zero(3_200_000, keepingTime: true)
        let verified = try await CLI.run(["verify"], cacheDir: workspace.cacheDirectory)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(
            verified.output.contains("a.bin: 1.0 MiB were bad") && verified.output.contains("1 damaged"),
            "\(verified.output)"
        )
        let before = try await origin.stats().requests.count
        #expect(try await get(), "zeros were served after verify")
        let asked = try await origin.stats().requests.dropFirst(before)
        // Besides a check of the version (a conditional request): the bad block alone.
        let ranges = asked.filter { !$0.isConditional }.map { $0.range ?? "whole" }
        #expect(ranges == ["bytes=3145728-4194303"], "\(ranges)")
        let clean = try await CLI.run(["verify"], cacheDir: workspace.cacheDirectory)
        #expect(clean.output.contains("all good"), "\(clean.output)")
    }

    /// A data file cut short behind the cache's back while `serve` has its resource open: the
    /// next answer ends at once, with right bytes. (An answer sent with `sendfile` past the
    /// file's end would send nothing, again and again, and the player would wait forever.)
    @Test func aDataFileCutShortIsNeverSentPastItsEnd() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let data = TestData.bytes(count: 2_000_000, seed: 18)
        try setup.workspace.write(data, as: "a.bin")
        let first = try await Curl.fetch(setup.url("a.bin"))
        #expect(first.body == Data(data))
        let file = try #require(setup.workspace.dataFiles().first)
        #expect(truncate(file, 100_000) == 0)
        let second = try await Tool.run("curl", ["-s", "-m", "20", "-o", "-", setup.url("a.bin")])
        // 28: curl's timeout, an answer that never ends.
        #expect(second.status != 28, "the answer did not end: \(second.stdout.count) bytes in 20 s")
        #expect(second.stdout.count <= data.count && second.stdout == Data(data.prefix(second.stdout.count)))
        try await setup.proxy.stop()
    }
}
