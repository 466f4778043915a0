import Foundation

/// Deterministic test bytes and scratch directories.
public enum TestData {
    /// `count` pseudo-random bytes, the same for the same `seed`.
    ///
    /// Written a word at a time: the tests run as a debug build, where a byte at a time holds
    /// the cooperative pool for the hundreds of megabytes some tests ask for, and the timed tests
    /// beside them wait.
    public static func bytes(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &+ 0x9E37_79B9_7F4A_7C15
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { raw in
            var index = 0
            while index < count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                var word = (state ^ (state >> 29)) &* 0xBF58_476D_1CE4_E5B9
                if index + 8 <= count {
                    // The word's bytes from its lowest, as the loop below writes them.
                    raw.storeBytes(of: word.littleEndian, toByteOffset: index, as: UInt64.self)
                    index += 8
                    continue
                }
                while index < count {
                    raw[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return result
    }

    /// A new empty directory under the system's temporary directory.
    public static func temporaryDirectory(_ label: String = "streamcache") -> String {
        let path = NSTemporaryDirectory() + "/\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

extension TestData {
    /// Where `received` first differs from `expected` (a byte, or the length), `nil` if equal;
    /// for expectations that say where a read went wrong without printing megabytes.
    public static func mismatch<A: Collection, B: Collection>(_ received: A, _ expected: B) -> String?
    where A.Element == UInt8, B.Element == UInt8 {
        // Equal contiguous bytes (the rule) are compared with `memcmp`; only a difference is
        // looked for a byte at a time.
        let equal = received.withContiguousStorageIfAvailable { left in
            expected.withContiguousStorageIfAvailable { right in
                left.count == right.count
                    && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
        if equal == true { return nil }
        var offset = 0
        var left = received.makeIterator()
        var right = expected.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return nil
            case (let got?, let want?) where got == want:
                offset += 1
            case (let got?, let want?):
                return "byte \(offset) is \(got), expected \(want) (\(received.count) of \(expected.count) bytes)"
            default:
                return "\(received.count) bytes, expected \(expected.count) (equal up to byte \(offset))"
            }
        }
    }
}
