import Foundation
import StreamCacheTesting
import Testing

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

    struct Result {
        let status: Int32
        let stdout: Data
        let stderr: String
        var output: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Starts `streamcache ARGS` with the cache in `cacheDir`.
    static func start(
        _ arguments: [String],
        cacheDir: String?,
        stdout: FileHandle? = nil
    ) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["STREAMCACHE_DIR"] = cacheDir
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Runs `streamcache ARGS` to completion.
    static func run(_ arguments: [String], cacheDir: String?) throws -> Result {
        let (process, out, err) = try start(arguments, cacheDir: cacheDir)
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: stdoutData,
            stderr: String(decoding: stderrData, as: UTF8.self)
        )
    }
}

/// `streamcache origin DIR` in its own process.
final class OriginProcess {
    let process: Process
    let port: Int
    let directory: String

    init(directory: String, arguments: [String] = []) throws {
        self.directory = directory
        let (process, out, _) = try CLI.start(["origin", directory] + arguments, cacheDir: nil)
        self.process = process
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line += byte
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening on http://127.0.0.1:"),
            let port = Int(text.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        else {
            process.terminate()
            throw POSIXError(.EIO)
        }
        self.port = port
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    struct Stats: Decodable {
        let bodyBytes: Int64
        let duplicateBytes: Int64
    }

    /// What the origin has sent, from its `/_origin/stats` endpoint.
    func stats() throws -> Stats {
        let data = try Data(contentsOf: URL(string: url("_origin/stats"))!)
        return try JSONDecoder().decode(Stats.self, from: data)
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
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

    func remove() {
        for path in [originDirectory, cacheDirectory, outputDirectory] {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
