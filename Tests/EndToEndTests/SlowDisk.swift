import Foundation
import StreamCacheTesting

/// A folder whose writes to data files can be held for seconds each (`slow_disk.py`, a FUSE
/// filesystem over a folder of the workspace), mounted for one test.
struct SlowDisk {
    /// Where the filesystem is mounted.
    let path: String
    private let backing: String
    private let process = ChildProcess()

    /// Whether a FUSE filesystem can be mounted here (`/dev/fuse`, Debian's `python3-fuse` and
    /// the right to mount): one is mounted and unmounted to see.
    static let isAvailable: Bool = {
        guard getuid() == 0, FileManager.default.fileExists(atPath: "/dev/fuse") else { return false }
        let directory = URL(fileURLWithPath: TestData.temporaryDirectory("fuse-probe")).standardizedFileURL.path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for folder in ["backing", "mounted"] {
            try? FileManager.default.createDirectory(
                atPath: directory + "/" + folder,
                withIntermediateDirectories: true
            )
        }
        let probe = ChildProcess()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        probe.arguments = [Fixtures.path("slow_disk.py"), directory + "/backing", directory + "/mounted"]
        guard (try? probe.run()) != nil else { return false }
        // Once, before any test: a short wait on this thread, with no task waiting on another.
        var mounted = false
        for _ in 0..<100 where probe.isRunning && !mounted {
            usleep(50_000)
            mounted = isMounted(directory + "/mounted")
        }
        unmount(directory + "/mounted", process: probe)
        return mounted
    }()

    private static func isMounted(_ path: String) -> Bool {
        ((try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? "").contains(" \(path) fuse")
    }

    private static func unmount(_ path: String, process: ChildProcess) {
        let unmount = ChildProcess()
        unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
        unmount.arguments = ["-l", path]
        if (try? unmount.run()) != nil { unmount.waitUntilExit() }
        process.terminate()
    }

    init(in directory: String) async throws {
        // As /proc/mounts spells it.
        let directory = URL(fileURLWithPath: directory).standardizedFileURL.path
        backing = directory + "/backing"
        path = directory + "/mounted"
        for folder in [backing, path] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Fixtures.path("slow_disk.py"), backing, path]
        try process.run()
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.isMounted(path) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                process.terminate()
                throw POSIXError(.ENODEV)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Holds each write to a data file at `offset` or past for `seconds` (0: none).
    func holdWrites(for seconds: Int, from offset: Int = 0) throws {
        try "\(seconds) \(offset)\n".write(toFile: backing + "/slow-writes", atomically: true, encoding: .utf8)
    }

    func unmount() {
        try? FileManager.default.removeItem(atPath: backing + "/slow-writes")
        Self.unmount(path, process: process)
    }
}
