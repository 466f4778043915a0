import StreamCache
import StreamCacheOffline

/// The exit status of a command that failed: curl's number where curl has one, so scripts
/// written for curl read them alike (`docs/command-line.md` has the table).
enum ExitStatus {
    static let failure: Int32 = 1
    static let hostNotFound: Int32 = 6
    static let cannotConnect: Int32 = 7
    /// The origin answered 400 or above.
    static let httpError: Int32 = 22
    /// The output could not be written.
    static let writeError: Int32 = 23
    static let timeout: Int32 = 28
    /// A usage error: an unknown command or option, a missing or invalid argument (EX_USAGE).
    static let usage: Int32 = 64

    static func of(_ error: StreamCacheError) -> Int32 {
        switch error.kind {
        case .originUnreachable where error.cause == .hostNotFound: hostNotFound
        case .originUnreachable where error.cause != nil: cannotConnect
        case .originTimeout: timeout
        case .originStatus where (error.status ?? 0) >= 400: httpError
        // curl -f exits 22 for the 416 a server answers a range past the end with.
        case .rangeNotSatisfiable: httpError
        default: failure
        }
    }

    /// The status of the origin failure behind `error`; 64 for a section that cannot be cut
    /// (the user's to change); else 1.
    static func of(_ error: OfflineError) -> Int32 {
        if error.kind == .section { return usage }
        return error.cause.map(of) ?? failure
    }
}
