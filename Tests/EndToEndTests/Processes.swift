import Foundation
import StreamCacheTesting
import Testing

/// Runs `body` on a thread of its own, so that blocking on a child process never holds one of the
/// few threads Swift concurrency runs every test on.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// The built `streamcache` binary, run as a user or a script would.
enum CLI {
    /// `$STREAMCACHE_BINARY`, else `streamcache` beside the test bundle in the build folder.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["STREAMCACHE_BINARY"] { return path }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("streamcache").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return ".build/debug/streamcache"
    }

    typealias Result = ProcessResult

    /// Starts `streamcache ARGS` with the cache in `cacheDir`: the process, its output and its errors.
    static func start(
        _ arguments: [String],
        cacheDir: String?,
        in folder: String? = nil,
        openFileLimit: Int? = nil,
        launcher: [String] = []
    ) throws -> (ChildProcess, ChildOutput, ChildOutput) {
        let process = command(arguments, cacheDir: cacheDir)
        if let openFileLimit {
            // Under a limit the process may not raise (soft and hard), as `ulimit -n` sets it.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", binary] + arguments
        } else if let program = launcher.first {
            // A program that sets the process up, then runs `binary ARGS` in its place.
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [binary] + arguments
        }
        if let folder { process.currentDirectoryURL = URL(fileURLWithPath: folder) }
        let (out, err) = try process.startCapturing()
        return (process, out, err)
    }

    /// Runs `streamcache ARGS` to completion; a run that outlasts `timeout` is killed (and then
    /// has a non-zero status and says so on stderr).
    static func run(
        _ arguments: [String],
        cacheDir: String?,
        in folder: String? = nil,
        path: String? = nil,
        timeout: Duration = .seconds(120)
    ) async throws -> Result {
        let process = command(arguments, cacheDir: cacheDir)
        if let folder { process.currentDirectoryURL = URL(fileURLWithPath: folder) }
        // `PATH` for the tools the command runs (ffmpeg), when a test gives its own.
        if let path { process.environment?["PATH"] = path }
        return try await process.runToCompletion(timeout: timeout)
    }

    /// `streamcache ARGS` with the cache in `cacheDir`, not started.
    private static func command(_ arguments: [String], cacheDir: String?) -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["STREAMCACHE_DIR"] = cacheDir
        // Each test's offline library beside its cache, not in the user's data folder.
        environment["STREAMCACHE_LIBRARY"] = cacheDir.map { $0 + "/packages" }
        process.environment = environment
        return process
    }
}

/// What a child process writes to one of its pipes, read as it comes (so the child never blocks on
/// a full pipe) and closed once the child has closed its end.
final class ChildOutput: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(handle.fileDescriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                condition.withLock {
                    if count > 0 { data += buffer[0..<count] } else { ended = true }
                    condition.broadcast()
                }
                if count <= 0 { break }
            }
            try? handle.close()
        }.start()
    }

    /// All the child wrote, once it has closed its end (at its exit, as a rule).
    func all() async throws -> Data {
        try await onOwnThread { self.waitUntil { $0.ended } }
    }

    /// All the child wrote, as text, once it has closed its end.
    func text() async throws -> String { String(decoding: try await all(), as: UTF8.self) }

    /// The first line (all there is if the child ends before a newline).
    func firstLine() async throws -> String {
        let data = try await onOwnThread { self.waitUntil { $0.ended || $0.data.contains(UInt8(ascii: "\n")) } }
        return String(decoding: data.prefix { $0 != UInt8(ascii: "\n") } + [UInt8(ascii: "\n")], as: UTF8.self)
    }

    private func waitUntil(_ done: (ChildOutput) -> Bool) -> Data {
        condition.withLock {
            while !done(self) { condition.wait() }
            return data
        }
    }
}

/// Whether something listens on 127.0.0.1 `port` within 30 s.
func isListening(port: Int) async throws -> Bool {
    try await onOwnThread {
        // Python's start alone took more than the 5 s this once waited, in a loaded test run.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if canConnect(host: "127.0.0.1", port: port) { return true }
            usleep(10_000)
        }
        return false
    }
}

/// What a child process left when it ended.
/// Stops `process` (`SIGSTOP`) at a moment it holds no write lock on the index of `cacheDir`:
/// stopped inside a write transaction, it would hold every other process's writes, `serve`'s
/// start among them, for the index's busy timeout (30 s), which then fails. Where the system
/// shows no lock table (`/proc/locks`), it stops the process at once.
func stopOutsideIndexWrite(_ process: pid_t, cacheDir: String) async throws {
    let shared = cacheDir + "/index.sqlite-shm"
    for _ in 0..<200 {
        kill(process, SIGSTOP)
        var status = stat()
        guard stat(shared, &status) == 0, let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return }
        let inode = ":\(status.st_ino) "
        let writing = locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 5 && fields[3] == "WRITE" && fields[4] == "\(process)"
                && (String(fields[5]) + " ").hasSuffix(inode)
        }
        if !writing { return }
        kill(process, SIGCONT)
        try await Task.sleep(for: .milliseconds(2))
    }
    Issue.record("process \(process) never stopped outside an index write")
}

struct ProcessResult: Sendable {
    let status: Int32
    let stdout: Data
    let stderr: String
    /// Whether it outlasted its time and was killed.
    var timedOut = false
    var output: String { String(decoding: stdout, as: UTF8.self) }
}

extension ChildProcess {
    /// Runs the process with its output captured until it ends; a run that outlasts `timeout` is
    /// killed (and then has a non-zero status and says so on stderr).
    func runToCompletion(timeout: Duration) async throws -> ProcessResult {
        let (out, err) = try startCapturing()
        let timedOut = Locked(false)
        let killer = DispatchWorkItem { [self] in
            guard isRunning else { return }
            timedOut.value = true
            kill(processIdentifier, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds)), execute: killer)
        defer { killer.cancel() }
        let stdoutData = try await out.all()
        var stderr = try await err.text()
        try await onOwnThread { self.waitUntilExit() }
        if timedOut.value { stderr += "(killed after \(timeout))\n" }
        return ProcessResult(status: terminationStatus, stdout: stdoutData, stderr: stderr, timedOut: timedOut.value)
    }

    /// Starts the process with its output and errors captured.
    func startCapturing() throws -> (ChildOutput, ChildOutput) {
        let out = Pipe()
        let err = Pipe()
        standardOutput = out
        standardError = err
        try self.run()
        return (ChildOutput(out), ChildOutput(err))
    }
}

/// A value shared between threads behind a lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A `streamcache` command that serves (`origin`, `serve`) in its own process, killed when the
/// value goes away.
final class ListeningProcess: Sendable {
    let process: ChildProcess
    let port: Int

    /// Starts `streamcache ARGS` (in `folder`, if given) and waits for its
    /// `listening on http://HOST:PORT` line.
    init(
        _ arguments: [String],
        cacheDir: String? = nil,
        in folder: String? = nil,
        openFileLimit: Int? = nil,
        launcher: [String] = []
    ) async throws {
        var arguments = arguments
        // Tests run side by side: each proxy on a free port unless the test names one.
        if arguments.first == "serve", !arguments.contains("--port") { arguments += ["--port", "0"] }
        let (process, out, _) = try CLI.start(
            arguments,
            cacheDir: cacheDir,
            in: folder,
            openFileLimit: openFileLimit,
            launcher: launcher
        )
        self.process = process
        let text = try await out.firstLine()
        guard text.hasPrefix("listening on http://"),
            let port = Int(text.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        else {
            kill(process.processIdentifier, SIGKILL)
            throw POSIXError(.EIO)
        }
        self.port = port
    }

    /// `http://127.0.0.1:PORT/PATH`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Sends `signal` and waits (at most 10 s) for the process to end: its status and the
    /// seconds it took, or `nil` if it was still running (then it is killed).
    func end(with signal: Int32) async throws -> (status: Int32, seconds: Double)? {
        let process = process
        // Timed on the waiting thread: a busy test run can be slow to resume this task.
        let elapsed = try await onOwnThread { () -> Duration? in
            let start = ContinuousClock.now
            kill(process.processIdentifier, signal)
            for _ in 0..<10_000 where process.isRunning { usleep(1000) }
            return process.isRunning ? nil : ContinuousClock.now - start
        }
        guard let elapsed else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            return nil
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (process.terminationStatus, seconds)
    }

    /// Asks the process to stop (SIGTERM) and waits until it has; kills it if it takes over 10 s.
    func stop() async throws {
        process.terminate()
        let process = process
        let exited = try await onOwnThread {
            for _ in 0..<1000 where process.isRunning { usleep(10_000) }
            return !process.isRunning
        }
        if !exited, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        #expect(exited, "streamcache did not stop on SIGTERM")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// `streamcache origin DIR`: the conditioned test origin.
typealias OriginProcess = ListeningProcess

extension ListeningProcess {
    convenience init(directory: String, arguments: [String] = []) async throws {
        try await self.init(["origin", directory] + arguments)
    }

    struct Stats: Decodable {
        struct Request: Decodable {
            let path: String
            let range: String?
            let status: Int
            let bodyBytes: Int64
            /// The request's header fields, as `Name: value`.
            let headers: [String]?

            /// Whether it asked on a condition (`If-None-Match`, `If-Modified-Since`).
            var isConditional: Bool {
                (headers ?? []).contains { $0.hasPrefix("If-None-Match") || $0.hasPrefix("If-Modified-Since") }
            }
        }
        let requests: [Request]
        let bodyBytes: Int64
        let duplicateBytes: Int64
        /// Requests still being answered (a request is listed once its answer is sent).
        let activeRequests: Int?
    }

    /// What the origin has sent once every request is answered (waiting at most 5 s).
    func settledStats() async throws -> Stats {
        var stats = try await self.stats()
        for _ in 0..<50 where (stats.activeRequests ?? 0) > 0 {
            try await Task.sleep(for: .milliseconds(100))
            stats = try await self.stats()
        }
        return stats
    }

    /// What the origin has sent, from its `/_origin/stats` endpoint.
    func stats() async throws -> Stats {
        let url = URL(string: url("_origin/stats"))!
        let data = try await onOwnThread { try Data(contentsOf: url) }
        return try JSONDecoder().decode(Stats.self, from: data)
    }
}

/// A folder of test media for an origin, and a cache directory, removed afterwards.
struct Workspace {
    let originDirectory = TestData.temporaryDirectory("origin")
    let cacheDirectory = TestData.temporaryDirectory("cache")
    let outputDirectory = TestData.temporaryDirectory("out")

    func write(_ bytes: [UInt8], as name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: originDirectory + "/" + name))
    }

    func output(_ name: String) -> String { outputDirectory + "/" + name }

    func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    /// The paths of the cache's data files.
    func dataFiles() -> [String] { dataFilesIn(cacheDirectory) }

    /// The paths of the data files of the cache in `directory`, largest first.
    func dataFilesIn(_ directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/data")) ?? []
        let paths = names.map { directory + "/data/" + $0 }
        func size(_ path: String) -> Int {
            (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        }
        return paths.sorted { size($0) > size($1) }
    }

    /// The bytes the files under `directory` take on disk (their allocated blocks).
    func sizeOnDisk(of directory: String) -> Int64 {
        let names = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
        return names.reduce(0) { total, name in
            var status = stat()
            guard stat(directory + "/" + name, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return total }
            return total + Int64(status.st_blocks) * 512
        }
    }

    func remove() {
        for path in [originDirectory, cacheDirectory, outputDirectory] {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// `ls --json`: the resources of its object (their fields as `Resource` decodes them).
struct ListingOf<Resource: Decodable>: Decodable {
    let resources: [Resource]
}

extension CLI {
    /// The bytes `ls --json` lists as cached, by the last part of each resource's URL.
    static func cachedBytes(cacheDir: String) async throws -> [String: Int64] {
        struct Resource: Decodable {
            let url: String
            let cachedBytes: Int64
        }
        let listed = try await run(["ls", "--json"], cacheDir: cacheDir)
        let resources = try JSONDecoder().decode(ListingOf<Resource>.self, from: Data(listed.output.utf8)).resources
        return Dictionary(
            uniqueKeysWithValues: resources.map { (String($0.url.split(separator: "/").last!), $0.cachedBytes) }
        )
    }
}
