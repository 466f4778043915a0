import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Data files that an offline package shares with the cache: one inode under two names (a hard
/// link), so a film downloaded for offline playback is stored once.
///
/// A shared file's bytes are never cut or emptied by the cache: eviction, `rm` and the reclaim
/// of unrecorded bytes unlink the cache's name and leave the package's (``cut(_:to:)``).
package enum SharedFiles {
    /// Whether the file open at `descriptor` has another name than the cache's.
    package static func isShared(_ descriptor: Int32) -> Bool {
        var info = stat()
        return fstat(descriptor, &info) == 0 && info.st_nlink > 1
    }

    /// Cuts the file open at `descriptor` to `length` bytes, unless it is shared.
    ///
    /// - Returns: whether the file is now `length` bytes long or less; `false` for a shared file
    ///   (left as it is) or a failed cut.
    @discardableResult
    package static func cut(_ descriptor: Int32, to length: Int64) -> Bool {
        guard !isShared(descriptor) else { return false }
        return ftruncate(descriptor, off_t(length)) == 0
    }

    /// Makes `destination` (by default `path`) a second name of the data file at `dataPath`
    /// when `path` and the data file hold the same `length` bytes, replacing `destination`
    /// atomically (a link beside it, then a rename). `path` itself is left as it is.
    ///
    /// The data file's last bytes may not be durable yet (the cache records them in batches):
    /// it is synced (`sync`) before `destination` names it, so a power loss never leaves the
    /// package a file whose tail was lost. `path` need not be durable: the bytes kept are the
    /// data file's.
    ///
    /// - Returns: whether `destination` now names the data file; `false` leaves both names as
    ///   they were (other bytes, another file system, no links there, a failed sync).
    package static func share(
        _ path: String,
        with dataPath: String,
        length: Int64,
        as destination: String? = nil,
        sync: (Int32) -> Int32 = FileSync.data(of:)
    ) -> Bool {
        let destination = destination ?? path
        let package = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard package >= 0 else { return false }
        defer { close(package) }
        let data = open(dataPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard data >= 0 else { return false }
        defer { close(data) }
        var packageInfo = stat()
        var dataInfo = stat()
        guard fstat(package, &packageInfo) == 0, fstat(data, &dataInfo) == 0,
            (dataInfo.st_mode & S_IFMT) == S_IFREG,
            Int64(packageInfo.st_size) == length, Int64(dataInfo.st_size) == length
        else { return false }
        if packageInfo.st_dev == dataInfo.st_dev, packageInfo.st_ino == dataInfo.st_ino { return true }
        guard sameBytes(package, data, length: length), sync(data) == 0 else { return false }
        let temporary = destination + ".shared"
        unlink(temporary)
        guard link(dataPath, temporary) == 0 else { return false }
        guard rename(temporary, destination) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Whether the first `length` bytes of the two files are the same.
    private static func sameBytes(_ first: Int32, _ second: Int32, length: Int64) -> Bool {
        let size = 1 << 20
        let a = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        let b = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer {
            a.deallocate()
            b.deallocate()
        }
        var offset: Int64 = 0
        while offset < length {
            let count = Int(min(Int64(size), length - offset))
            guard pread(first, a, count, off_t(offset)) == count, pread(second, b, count, off_t(offset)) == count,
                memcmp(a, b, count) == 0
            else { return false }
            offset += Int64(count)
        }
        return true
    }
}
