import Crypto
import _CryptoExtras

/// Decrypts one AES-128 segment (AES-128-CBC with PKCS#7 padding, RFC 8216 §5.2) as its bytes
/// arrive: every whole block but the last is decrypted at once, the last one, which holds the
/// padding, at ``finish()``. Memory stays at one chunk whatever the segment's size.
package struct SegmentDecryptor {
    private static let block = 16
    private let key: SymmetricKey
    private var iv: [UInt8]
    private var pending: [UInt8] = []

    /// - Precondition: `key` and `iv` are 16 bytes each.
    package init(key: [UInt8], iv: [UInt8]) {
        self.key = SymmetricKey(data: key)
        self.iv = iv
    }

    /// The clear bytes that `bytes` completes, keeping back the last block.
    package mutating func decrypt(_ bytes: ArraySlice<UInt8>) throws(DecryptionFailure) -> [UInt8] {
        pending += bytes
        guard pending.count > Self.block else { return [] }
        let ready = (pending.count - 1) / Self.block * Self.block
        let clear = try decryptBlocks(pending[..<ready])
        iv = Array(pending[(ready - Self.block)..<ready])
        pending.removeFirst(ready)
        return clear
    }

    /// The last block's clear bytes, without the padding.
    ///
    /// - Throws: ``DecryptionFailure`` when the bytes were not whole blocks or the padding is
    ///   not PKCS#7 (another key, or a segment that is not encrypted).
    package mutating func finish() throws(DecryptionFailure) -> [UInt8] {
        guard pending.count == Self.block else { throw DecryptionFailure() }
        let last = try decryptBlocks(pending[...])
        pending = []
        guard let padding = last.last.map(Int.init), (1...Self.block).contains(padding),
            last.suffix(padding).allSatisfy({ Int($0) == padding })
        else { throw DecryptionFailure() }
        return Array(last.dropLast(padding))
    }

    private func decryptBlocks(_ blocks: ArraySlice<UInt8>) throws(DecryptionFailure) -> [UInt8] {
        do {
            let vector = try AES._CBC.IV(ivBytes: iv)
            return Array(try AES._CBC.decrypt(blocks, using: key, iv: vector, noPadding: true))
        } catch {
            throw DecryptionFailure()
        }
    }
}

/// The bytes do not decrypt with the key: not whole AES blocks, or not PKCS#7 padded.
package struct DecryptionFailure: Error {}
