import Foundation
import StreamCache
import StreamCacheOfflineCore

extension OfflineFormat {
    /// HLS: multivariant and media playlists (RFC 8216), packages entered at `master.m3u8`. It
    /// also takes a manifest no format's detector recognised, so that its parser says what is
    /// wrong with it.
    public static let hls = OfflineFormat(
        entryPoint: HLSPackagePlan.entryPoint,
        takes: { $0 == .hls || $0 == nil },
        planner: { library, engine, options in HLSPackagePlanner(library: library, engine: engine, options: options) },
        record: { manifest, library, engine, options, emit in
            try await HLSLiveRecorder(
                manifest: manifest,
                library: library,
                engine: engine,
                options: options,
                emit: emit
            )
            .run()
        },
        rebuiltEntryPoint: { manifest in
            manifest.renditions.first.map {
                HLSPackagePlan.multivariantPlaylist(to: $0, bytes: manifest.estimatedBytes)
            }
        }
    )
}

extension ManifestFetcher {
    /// - Throws: ``OfflineError`` `manifest` naming the URL.
    func playlist(_ url: URL) async throws -> Playlist {
        try Self.playlist(parsing: try await document(url).bytes, from: url)
    }

    /// The playlist `bytes` (fetched from `url`) hold.
    ///
    /// - Throws: ``OfflineError`` `manifest` naming the URL.
    static func playlist(parsing bytes: [UInt8], from url: URL) throws(OfflineError) -> Playlist {
        do {
            return try Playlist(parsing: bytes, url: url.absoluteString)
        } catch {
            throw OfflineError(.manifest, "\(url.absoluteString) is not a usable playlist: \(error)")
        }
    }
}

extension Decryption {
    /// The IV of `key` for the segment with media sequence number `sequence`: the key's `IV`
    /// attribute, else the sequence number as a 128-bit big-endian integer (RFC 8216 §5.2);
    /// `nil` for an `IV` that is not hexadecimal.
    static func iv(of key: Key, sequence: Int64) -> String? {
        guard key.iv != nil else { return String(repeating: "0", count: 16) + String(format: "%016llx", sequence) }
        return key.ivBytes.map { $0.map { String(format: "%02x", $0) }.joined() }
    }
}
