#if canImport(Glibc)
import Glibc
#endif

/// How glibc's allocator treats the buffers a transfer goes through: runs of up to 512 KiB from
/// the origin, chunks of 512 KiB from the cache file, one after another on several threads.
///
/// By default glibc maps a buffer of that size on its own, or keeps it in an arena that it trims
/// back to the system as soon as 128 KiB lie free at its top, so the next buffer is mapped and
/// faulted in again, page after page (`bench/HISTORY.md` counts the faults of a cold `get`), and
/// a fault costs more where the memory was handed back to a virtual machine's
/// host. Buffers up to 1 MiB come from the arenas, which keep up to 4 MiB free at their top for
/// the next one.
enum TransferMemory {
    static func keepBuffersForReuse() {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which the Glibc module leaves out.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(address, to: Mallopt.self)
        let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        _ = mallopt(mmapThreshold, 1 << 20)
        _ = mallopt(trimThreshold, 4 << 20)
        #endif
    }
}
