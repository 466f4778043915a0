import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process (a `streamcache` command, curl, ffmpeg, nginx, python) started from a test
/// process that runs many tests at once, as independent as one a shell starts: the part of
/// Foundation's `Process` the tests use, on `posix_spawn`.
///
/// Foundation's `Process` on Linux does not fit a test process that starts hundreds of children
/// from many threads:
/// * It closes in the child only the descriptors open when it builds its spawn actions. One that
///   another thread opens a moment later is inherited: another child's pipe, whose reader then
///   never sees its end, or the socket Foundation watches to learn that another child ended,
///   which then seems to run until this one ends.
/// * It lists those descriptors by copying whole `dirent` names, which reads past the end of
///   the directory buffer once a process has enough descriptors open (a crash).
/// * A child inherits the starting thread's blocked signals, and the threads Swift concurrency
///   runs on block SIGTERM and SIGINT: such a child never ends on `terminate()`.
/// A `ChildProcess` closes every other descriptor in the child (`closefrom`), starts it with no
/// signal blocked and SIGPIPE, SIGINT and SIGTERM at their defaults, and waits for it on a thread
/// of its own.
public final class ChildProcess: @unchecked Sendable {
    public enum TerminationReason: Sendable {
        case exit
        case uncaughtSignal
    }

    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's environment; this process's when `nil`.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or `nil` for /dev/null.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    public private(set) var processIdentifier: pid_t = 0
    private let condition = NSCondition()
    private var waitStatus: Int32?

    public init() {}

    /// Whether the child has started and not yet ended.
    public var isRunning: Bool {
        condition.withLock { processIdentifier > 0 && waitStatus == nil }
    }

    /// The exit status, or the number of the signal that ended the child.
    public var terminationStatus: Int32 {
        let status = waitUntilEnded()
        return isSignalled(status) ? status & 0x7f : (status >> 8) & 0xff
    }

    public var terminationReason: TerminationReason {
        isSignalled(waitUntilEnded()) ? .uncaughtSignal : .exit
    }

    /// Sends SIGTERM.
    public func terminate() {
        if isRunning { kill(processIdentifier, SIGTERM) }
    }

    /// Blocks the calling thread until the child has ended.
    public func waitUntilExit() { _ = waitUntilEnded() }

    /// Starts the child.
    public func run() throws {
        guard let path = executableURL?.path else { throw POSIXError(.ENOENT) }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let nullDevice = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(nullDevice) }
        for (target, stream) in [
            (STDIN_FILENO, standardInput), (STDOUT_FILENO, standardOutput), (STDERR_FILENO, standardError),
        ] {
            posix_spawn_file_actions_adddup2(&actions, descriptor(of: stream, for: target) ?? nullDevice, target)
        }
        if let directory = currentDirectoryURL?.path {
            #if canImport(Darwin)
            posix_spawn_file_actions_addchdir_np(&actions, directory)
            #else
            guard let chdir = SpawnExtensions.addChdir else { throw POSIXError(.ENOSYS) }
            _ = directory.withCString { chdir(&actions, $0) }
            #endif
        }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
        guard let closeFrom = SpawnExtensions.addCloseFrom else { throw POSIXError(.ENOSYS) }
        _ = closeFrom(&actions, 3)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid = pid_t()
        let failure = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard failure == 0 else { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
        let child = pid
        condition.withLock { processIdentifier = child }
        // The child's ends of its pipes belong to the child now.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            condition.withLock {
                waitStatus = status
                condition.broadcast()
            }
        }.start()
    }

    /// The descriptor `stream` gives the child as `target`, or `nil` for /dev/null.
    private func descriptor(of stream: Any?, for target: Int32) -> Int32? {
        switch stream {
        case let pipe as Pipe:
            return target == STDIN_FILENO
                ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
        case let handle as FileHandle where handle !== FileHandle.nullDevice:
            return handle.fileDescriptor
        default:
            return nil
        }
    }

    private func waitUntilEnded() -> Int32 {
        condition.withLock {
            precondition(processIdentifier > 0, "the child was never started")
            while waitStatus == nil { condition.wait() }
            return waitStatus!
        }
    }

    private func isSignalled(_ status: Int32) -> Bool {
        let low = status & 0x7f
        return low != 0 && low != 0x7f
    }
}

#if !canImport(Darwin)
/// glibc's spawn actions beyond POSIX (2.29 and 2.34), which its Swift module does not import.
private enum SpawnExtensions {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }
}
#endif
