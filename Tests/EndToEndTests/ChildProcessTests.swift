import Foundation
import StreamCacheTesting
import Testing

/// The tests' children are as independent as a shell's: they end on SIGTERM even when started
/// from a concurrency thread, and inherit no descriptor of the test process but their three.
@Suite(.timeLimit(.minutes(1))) struct ChildProcessTests {
    @Test func aChildEndsOnTerminate() async throws {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        child.terminate()
        let ended = try await onOwnThread {
            for _ in 0..<500 where child.isRunning { usleep(10_000) }
            return !child.isRunning
        }
        #expect(ended, "sleep did not end on SIGTERM")
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGTERM)
    }

    @Test func aChildInheritsOnlyItsOwnDescriptors() async throws {
        let unrelated = Pipe()
        defer { try? unrelated.fileHandleForWriting.close() }
        let result = try await Tool.run("sh", ["-c", "ls /proc/$$/fd"])
        let descriptors = result.output.split(separator: "\n").sorted()
        #expect(descriptors == ["0", "1", "2"], "\(descriptors)")
    }
}
