#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Writes all of `bytes` to `descriptor` with `write(2)`, again after an interruption; the
/// `errno` of the write that failed, or `nil` once all are written. The one write loop for
/// output files, the standard streams and package files.
package func writeWhole(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var done = 0
    while done < bytes.count {
        let result = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
        if result < 0 {
            if errno == EINTR { continue }
            return errno
        }
        done += result
    }
    return nil
}
