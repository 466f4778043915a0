import Foundation
import StreamCache
import StreamCacheOfflineCore

/// Turns the segments of one media playlist into package files (``PackageItem``s) and the
/// segments of the package's playlist that name them: keys and init sections once each, AES-128
/// files decrypted into the package (the playlist then names no key) unless encryption is kept.
///
/// A VOD package plans a whole playlist at once; a live recording plans each segment as it
/// appears, so the names a planner gives do not depend on what it planned before:
/// ``Naming/recorded`` names each file after its media sequence number and each key and init
/// section after its URL.
struct SegmentPlanner {
    enum Naming {
        /// `00000.ts`, `key0.key`, `init0.mp4`: by position, for a playlist planned whole.
        case counted
        /// `s<sequence>.ts` (with an epoch prefix after the origin's numbering restarted),
        /// `key-<hash>.key`, `init-<hash>.mp4`.
        case recorded(epoch: Int)
    }

    /// The media playlist's URL, for its relative URIs and messages.
    let url: URL
    /// The rendition's index in the manifest.
    let rendition: Int
    /// Its folder in the package.
    let folder: String
    let decrypting: Bool
    var naming: Naming
    /// Whether each kept key gets the `IV` its sequence number implied: where the package's
    /// playlist numbers its segments otherwise (a recording, a section).
    var writesImpliedIVs = false
    private var keyPaths: [String: String] = [:]
    private var mapPaths: [String: String] = [:]

    init(url: URL, rendition: Int, folder: String, decrypting: Bool, naming: Naming) {
        self.url = url
        self.rendition = rendition
        self.folder = folder
        self.decrypting = decrypting
        self.naming = naming
        if case .recorded = naming { writesImpliedIVs = true }
    }

    /// The package's version of `segment` (media sequence number `sequence`, at `position` in
    /// the playlist planned, starting `time` seconds into the package) and the files it needs
    /// that this planner has not planned yet.
    ///
    /// - Throws: ``OfflineError`` `playlist` for a segment, key or map URI that is not http(s):
    ///   kept verbatim, a `file:` URI would point the player at a file of this machine; dropped,
    ///   the package would lack it; or for an `IV` that is not 128 bits of hexadecimal.
    mutating func plan(
        _ segment: Segment,
        sequence: Int64,
        position: Int,
        time: Double
    ) throws(OfflineError) -> (Segment, [PackageItem]) {
        var segment = segment
        var items: [PackageItem] = []
        func item(
            _ kind: PackageItem.Kind,
            _ name: String,
            _ url: URL,
            _ range: SegmentByteRange?,
            _ duration: Double,
            _ decryption: Decryption?
        ) -> PackageItem {
            PackageItem(
                kind: kind,
                rendition: rendition,
                path: folder + "/" + name,
                url: url.absoluteString,
                offset: range?.offset,
                length: range?.length,
                start: time,
                duration: duration,
                decryption: decryption
            )
        }
        var decryption: Decryption?
        if decrypting, let key = segment.key, let uri = key.uri {
            guard let iv = Decryption.iv(of: key, sequence: sequence) else {
                throw OfflineError(.manifest, "\(url.absoluteString): invalid IV \(key.iv ?? "")")
            }
            decryption = Decryption(key: try Self.resolve(uri, url).absoluteString, iv: iv)
            segment.keys = []
        }
        for keyIndex in segment.keys.indices {
            guard let uri = segment.keys[keyIndex].uri else { continue }
            let keyURL = try Self.resolve(uri, url)
            let name: String
            if let known = keyPaths[keyURL.absoluteString] {
                name = known
            } else {
                name = fileName(key: keyURL.absoluteString, count: keyPaths.count)
                keyPaths[keyURL.absoluteString] = name
                items.append(item(.key, name, keyURL, nil, 0, nil))
            }
            segment.keys[keyIndex].attributes.setQuoted("URI", to: name)
            if writesImpliedIVs, segment.keys[keyIndex].iv == nil, segment.keys[keyIndex].method == "AES-128" {
                // A recording or a section lists fewer segments than the origin did, numbered
                // from its own first: the IV the origin's numbering implied is written out.
                let hex = String(repeating: "0", count: 16) + String(format: "%016llx", sequence)
                segment.keys[keyIndex].attributes.setUnquoted("IV", to: "0x" + hex)
            }
        }
        if var map = segment.map {
            let mapURL = try Self.resolve(map.uri, url)
            let identity = mapURL.absoluteString + "#" + (map.byteRange?.description ?? "")
            let name: String
            if let known = mapPaths[identity] {
                name = known
            } else {
                name = fileName(
                    map: identity,
                    count: mapPaths.count,
                    extension: Self.fileExtension(mapURL, default: "mp4")
                )
                mapPaths[identity] = name
                items.append(item(.initialization, name, mapURL, map.byteRange, 0, decryption))
            }
            map.attributes.setQuoted("URI", to: name)
            map.attributes.remove("BYTERANGE")
            segment.map = map
        }
        let fileExtension = Self.fileExtension(URL(string: segment.uri), default: "ts")
        let name: String
        switch naming {
        case .counted: name = String(format: "%05d.", position) + fileExtension
        case .recorded(let epoch): name = (epoch > 0 ? "e\(epoch)-" : "") + "s\(sequence)." + fileExtension
        }
        if !segment.gap {
            let segmentURL = try Self.resolve(segment.uri, url)
            items.append(item(.segment, name, segmentURL, segment.byteRange, segment.duration, decryption))
        }
        segment.uri = name
        segment.byteRange = nil
        return (segment, items)
    }

    private func fileName(key url: String, count: Int) -> String {
        switch naming {
        case .counted: "key\(count).key"
        case .recorded: "key-\(AssetID.make(key: url, playlists: []).prefix(8)).key"
        }
    }

    private func fileName(map identity: String, count: Int, extension fileExtension: String) -> String {
        switch naming {
        case .counted: "init\(count).\(fileExtension)"
        case .recorded: "init-\(AssetID.make(key: identity, playlists: []).prefix(8)).\(fileExtension)"
        }
    }

    /// `uri` resolved against `base`: an http(s) URL, or the asset is refused.
    static func resolve(_ uri: String, _ base: URL) throws(OfflineError) -> URL {
        guard let url = URL(string: uri, relativeTo: base)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
        else {
            throw OfflineError(
                .manifest,
                "\(Credentials.redacted(base.absoluteString)) names \(Credentials.redacted(String(uri.prefix(200)))),"
                    + " which is not an http(s) URL: the asset is refused"
            )
        }
        return url
    }

    /// The extension of `url`'s last path component if it is a plausible one.
    static func fileExtension(_ url: URL?, default fallback: String) -> String {
        let candidate = url?.pathExtension.lowercased() ?? ""
        guard (1...5).contains(candidate.count), candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return fallback }
        return candidate
    }
}
