#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Makes what was written to a file durable before the index records it.
///
/// On Linux `fdatasync` reaches the drive. On Apple platforms `fsync` only hands the bytes to the
/// drive, which may keep them in its cache across a power loss; `F_FULLFSYNC` asks it to write
/// them, and a filesystem that does not support it gets `fsync`. The index (SQLite) is opened
/// with `PRAGMA fullfsync` there for the same reason.
public enum FileSync {
    /// Syncs `descriptor`'s data.
    ///
    /// - Returns: 0, or -1 with `errno` set.
    public static func data(of descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        return fsync(descriptor)
        #else
        return fdatasync(descriptor)
        #endif
    }
}
