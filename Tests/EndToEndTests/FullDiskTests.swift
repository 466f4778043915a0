import Foundation
import StreamCacheTesting
import Testing

/// A small tmpfs as the cache directory, filled by something else: on a full disk every request
/// got 500 "database or disk is full", and `rm --all` failed and freed nothing.
@Suite(.timeLimit(.minutes(3)), .enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
struct FullDiskTests {
    @Test func cachedBytesAreServedNewOnesStreamAndRmFreesSpace() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let disk = try Tmpfs(megabytes: 8)
        defer { disk.unmount() }
        let cached = TestData.bytes(count: 1_000_000, seed: 570)
        let fresh = TestData.bytes(count: 3_000_000, seed: 571)
        try workspace.write(cached, as: "cached.bin")
        try workspace.write(fresh, as: "fresh.bin")
        try workspace.write(fresh, as: "ranged.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let proxy = try await ListeningProcess(["serve"], cacheDir: disk.path)
        let cachedURL = proxy.url(origin.url("cached.bin"))
        let warm = try await Curl.fetch(cachedURL)
        #expect(warm.status == 200 && [UInt8](warm.body) == cached)
        try await Task.sleep(for: .milliseconds(500))

        // Something else fills the disk to the last byte.
        try disk.fill()
        let again = try await Curl.fetch(cachedURL, headers: ["Range: bytes=1000-199999"])
        #expect(again.status == 206, "cached bytes on a full disk: \(again.status) \(again.body.prefix(200))")
        #expect([UInt8](again.body) == Array(cached[1000..<200_000]))
        let streamed = try await Curl.fetch(proxy.url(origin.url("fresh.bin")))
        #expect(streamed.status == 200, "a new resource on a full disk: \(streamed.status)")
        let right = [UInt8](streamed.body) == fresh
        #expect(right, "\(streamed.body.count) bytes, not the resource")
        // A range of a new resource on the full disk: exactly its bytes, however they come.
        let ranged = try await Curl.fetch(proxy.url(origin.url("ranged.bin")), headers: ["Range: bytes=100000-2599999"])
        #expect(ranged.status == 206)
        let rightRange = [UInt8](ranged.body) == Array(fresh[100_000..<2_600_000])
        #expect(rightRange, "\(ranged.body.count) bytes, not bytes 100000-2599999")
        #expect(proxy.process.isRunning)
        try await proxy.stop()

        // Something else filled the disk: emptying the cache would not make room for new bytes,
        // so it gives up only what each new resource's index row needs.
        let kept = try await CLI.cachedBytes(cacheDir: disk.path)["cached.bin"] ?? 0
        #expect(kept >= 400_000, "the cache gave up its bytes to a disk it cannot free: \(kept) left")
        // `rm --all` works on the full disk and frees what the cache held.
        let freeBefore = disk.freeBytes
        let removed = try await CLI.run(["rm", "--all"], cacheDir: disk.path)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(disk.freeBytes > freeBefore, "rm --all freed nothing")
        let data = (try? FileManager.default.contentsOfDirectory(atPath: disk.path + "/data")) ?? []
        #expect(data.isEmpty, "data files left: \(data)")
    }

    /// One resource larger than the disk: what was written is recorded (the index keeps room),
    /// later resources are cached after eviction, and bytes on disk that the index never knew
    /// (a file without a row, a tail never recorded) are found and freed after a restart.
    @Test func aResourceLargerThanTheDiskLeavesTheCacheUsable() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let disk = try Tmpfs(megabytes: 8)
        defer { disk.unmount() }
        let large = TestData.bytes(count: 20_000_000, seed: 572)
        try workspace.write(large, as: "large.bin")
        for name in ["a", "b", "c"] {
            try workspace.write(TestData.bytes(count: 300_000, seed: UInt64(name.utf8.first!)), as: name + ".bin")
        }
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        func cachedBytes() async throws -> [String: Int64] { try await CLI.cachedBytes(cacheDir: disk.path) }

        var proxy = try await ListeningProcess(["serve"], cacheDir: disk.path)
        let got = try await Curl.fetch(proxy.url(origin.url("large.bin")))
        #expect(got.status == 200 && Array(got.body) == large, "\(got.status), \(got.body.count) bytes")
        try await Task.sleep(for: .milliseconds(500))
        let kept = try await cachedBytes()["large.bin"] ?? 0
        #expect(kept > 1_000_000, "the bytes written were not recorded: \(kept) cached")
        #expect(
            workspace.sizeOnDisk(of: disk.path + "/data") <= kept + 1_048_576,
            "bytes on disk the index does not know"
        )
        for name in ["a.bin", "b.bin"] {
            let reply = try await Curl.fetch(proxy.url(origin.url(name)))
            #expect(reply.status == 200 && reply.body.count == 300_000, "\(name): \(reply.status)")
        }
        try await proxy.stop()

        // Bytes the index never knew, as a crash or an older version leaves them.
        let file = try #require(workspace.dataFilesIn(disk.path).first)
        try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: disk.path + "/data/999999"))
        let tail = open(file, O_WRONLY | O_APPEND)
        let block = [UInt8](repeating: 7, count: 4096)
        for _ in 0..<750 where block.withUnsafeBytes({ write(tail, $0.baseAddress, $0.count) }) > 0 {}
        close(tail)
        try disk.fill()
        proxy = try await ListeningProcess(["serve"], cacheDir: disk.path)
        let reply = try await Curl.fetch(proxy.url(origin.url("c.bin")))
        #expect(reply.status == 200 && reply.body.count == 300_000, "after a restart: \(reply.status)")
        try await proxy.stop()
        try FileManager.default.removeItem(atPath: disk.path + "/filler")
        let again = try await CLI.run(["get", origin.url("c.bin"), "-o", workspace.output("c")], cacheDir: disk.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try await cachedBytes()["c.bin"] == 300_000, "the cache took nothing after the restart")
        #expect(!FileManager.default.fileExists(atPath: disk.path + "/data/999999"), "a file without a row was kept")
    }
}

/// A tmpfs of its own size, mounted for one test.
struct Tmpfs {
    let path: String

    /// Whether this process may mount one (root on Linux).
    static let canMount: Bool = {
        guard let probe = try? Tmpfs(megabytes: 1) else { return false }
        probe.unmount()
        return true
    }()

    init(megabytes: Int) throws {
        path = TestData.temporaryDirectory("tmpfs")
        let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard status == 0 else { throw POSIXError(.EPERM) }
    }

    /// Fills the filesystem with a file of zeros until writing fails.
    func fill() throws {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        _ = block.withUnsafeBytes { write(fd, $0.baseAddress, 1) }
    }

    var freeBytes: Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    func unmount() {
        _ = Self.run("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
