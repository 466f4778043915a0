import StreamCache

/// One file of an offline package that comes from the origin: a segment, an init section or a
/// key, and the bytes of the origin it holds.
struct PackageItem: Codable, Hashable, Sendable {
    enum Kind: String, Codable, Sendable {
        case segment, initialization, key
    }

    var kind: Kind
    /// The index of its rendition in the manifest.
    var rendition: Int
    /// Where it is kept, relative to the package folder.
    var path: String
    /// The absolute origin URL.
    var url: String
    /// The byte range of `url` it holds; `nil`: all of it.
    var offset: Int64?
    var length: Int64?
    /// Presentation time of its segment, or of the first segment that needs it, in seconds.
    var start: Double
    /// Seconds (0 for init sections and keys).
    var duration: Double
    /// How to decrypt what the origin serves encrypted, for a package kept in the clear; `nil`
    /// for a file kept as served.
    var decryption: Decryption?

    /// The byte range of the origin resource, if the item is a range of it.
    var range: ByteRange? {
        guard let offset, let length else { return nil }
        return ByteRange(offset: offset, length: length)
    }
}

/// The AES-128 key and IV that decrypt a package file the origin serves encrypted.
struct Decryption: Codable, Hashable, Sendable {
    /// The key's absolute origin URL.
    var key: String
    /// The initialization vector: 16 bytes, as 32 hexadecimal digits.
    var iv: String

    /// The IV of `key` for the segment with media sequence number `sequence`: the key's `IV`
    /// attribute, else the sequence number as a 128-bit big-endian integer (RFC 8216 §5.2);
    /// `nil` for an `IV` that is not hexadecimal.
    static func iv(of key: Key, sequence: Int64) -> String? {
        guard key.iv != nil else { return String(repeating: "0", count: 16) + String(format: "%016llx", sequence) }
        return key.ivBytes.map { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// The IV's 16 bytes.
    var ivBytes: [UInt8] {
        Key.ivBytes(hexadecimal: Substring(iv)) ?? []
    }
}

/// One media playlist of an offline package.
struct PackageRendition: Codable, Hashable, Sendable {
    enum Kind: String, Codable, Sendable {
        case video, audio, subtitles
    }

    var kind: Kind
    /// The folder holding its playlist and files, relative to the package folder.
    var folder: String
    var language: String?
    /// The origin URL of its media playlist.
    var url: String
    /// The sum of its segments' durations, in seconds.
    var duration: Double

    /// Its playlist, relative to the package folder.
    var playlistPath: String { folder + "/index.m3u8" }
}
