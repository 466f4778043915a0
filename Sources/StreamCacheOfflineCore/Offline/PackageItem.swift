import StreamCache

/// One file of an offline package that comes from the origin: a segment, an init section or a
/// key, and the bytes of the origin it holds.
package struct PackageItem: Codable, Hashable, Sendable {
    package enum Kind: String, Codable, Sendable {
        case segment, initialization, key
    }

    package var kind: Kind
    /// The index of its rendition in the manifest.
    package var rendition: Int
    /// Where it is kept, relative to the package folder.
    package var path: String
    /// The absolute origin URL.
    package var url: String
    /// The byte range of `url` it holds; `nil`: all of it.
    package var offset: Int64?
    package var length: Int64?
    /// Presentation time of its segment, or of the first segment that needs it, in seconds.
    package var start: Double
    /// Seconds (0 for init sections and keys).
    package var duration: Double
    /// How to decrypt what the origin serves encrypted, for a package kept in the clear; `nil`
    /// for a file kept as served.
    package var decryption: Decryption?

    /// The byte range of the origin resource, if the item is a range of it.
    package var range: ByteRange? {
        guard let offset, let length else { return nil }
        return ByteRange(offset: offset, length: length)
    }

    package init(
        kind: Kind,
        rendition: Int,
        path: String,
        url: String,
        offset: Int64? = nil,
        length: Int64? = nil,
        start: Double,
        duration: Double,
        decryption: Decryption? = nil
    ) {
        self.kind = kind
        self.rendition = rendition
        self.path = path
        self.url = url
        self.offset = offset
        self.length = length
        self.start = start
        self.duration = duration
        self.decryption = decryption
    }
}

/// The AES-128 key and IV that decrypt a package file the origin serves encrypted.
package struct Decryption: Codable, Hashable, Sendable {
    /// The key's absolute origin URL.
    package var key: String
    /// The initialization vector: 16 bytes, as 32 hexadecimal digits.
    package var iv: String

    /// The IV's 16 bytes; none for a value that is not 32 hexadecimal digits.
    package var ivBytes: [UInt8] {
        let digits = Array(iv.utf8)
        guard digits.count == 32 else { return [] }
        var bytes: [UInt8] = []
        for position in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[position..<position + 2], as: UTF8.self), radix: 16)
            else { return [] }
            bytes.append(byte)
        }
        return bytes
    }

    package init(
        key: String,
        iv: String
    ) {
        self.key = key
        self.iv = iv
    }
}

/// One media playlist of an offline package.
package struct PackageRendition: Codable, Hashable, Sendable {
    package enum Kind: String, Codable, Sendable {
        case video, audio, subtitles
    }

    package var kind: Kind
    /// The folder holding its playlist and files, relative to the package folder.
    package var folder: String
    package var language: String?
    /// The origin URL of its media playlist.
    package var url: String
    /// The sum of its segments' durations, in seconds.
    package var duration: Double

    /// Its playlist, relative to the package folder.
    package var playlistPath: String { folder + "/index.m3u8" }

    package init(
        kind: Kind,
        folder: String,
        language: String? = nil,
        url: String,
        duration: Double
    ) {
        self.kind = kind
        self.folder = folder
        self.language = language
        self.url = url
        self.duration = duration
    }
}

extension PackageItem.Kind {
    /// Keys, then init sections, then segments, at one presentation time.
    package var rank: Int {
        switch self {
        case .key: 0
        case .initialization: 1
        case .segment: 2
        }
    }
}
