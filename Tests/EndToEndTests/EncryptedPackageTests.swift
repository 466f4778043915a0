import Foundation
import Testing

/// AES-128 streams offline: decrypted into the package by default (it plays anywhere, with no
/// key to keep), kept as served with `--keep-encryption`, and a key that does not decrypt the
/// segments fails the download with one line.
@Suite(.timeLimit(.minutes(5))) struct EncryptedPackageTests {
    @Test func keepEncryptionStoresTheStreamAsServed() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.aes, in: setup.workspace.originDirectory)
        let result = try await setup.download(TestStreams.Kind.aes.playlist, "--keep-encryption")
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(result.output.split(separator: "\n").last.map(String.init))
        let manifest = try setup.manifest(id)
        let package = setup.library + "/" + id
        // Every segment as the origin serves it; the key a file only its owner reads.
        for item in manifest.items where item.kind == "segment" {
            let name = try #require(URL(string: item.url)?.lastPathComponent)
            let served = try Data(contentsOf: URL(fileURLWithPath: setup.workspace.originDirectory + "/aes/" + name))
            let kept = try Data(contentsOf: URL(fileURLWithPath: package + "/" + item.path))
            #expect(kept == served, "\(item.path)")
        }
        let keys = manifest.items.filter { $0.kind == "key" }
        #expect(keys.count == 1)
        for key in keys {
            let mode = try FileManager.default.attributesOfItem(atPath: package + "/" + key.path)[.posixPermissions]
            #expect(mode as? Int == 0o600, "key \(key.path) has mode \(String(describing: mode))")
        }
        let playlist = try String(contentsOfFile: package + "/video/index.m3u8", encoding: .utf8)
        #expect(playlist.contains("#EXT-X-KEY:METHOD=AES-128,URI=\"key0.key\""), "\(playlist)")
        // ffmpeg opens a local key file only when told to.
        let frames = try await TestStreams.frames(package + "/master.m3u8")
        let original = try await TestStreams.frames(setup.origin.url(TestStreams.Kind.aes.playlist))
        let same = frames == original
        #expect(same && frames.count > 1)
    }

    /// A key that is not the one the segments were encrypted with, and a key that is not 16
    /// bytes: one line naming the file, exit 1, and no segment left decrypted wrongly.
    @Test func aWrongKeyFailsTheDownloadWithOneLine() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        try await TestStreams.make(.aes, in: setup.workspace.originDirectory)
        let keyPath = setup.workspace.originDirectory + "/aes/enc.key"
        let cases: [(Data, String)] = [
            (Data(repeating: 0x42, count: 16), "cannot decrypt"),
            (Data("not a key".utf8), "is not an AES-128 key (9 bytes, not 16)"),
        ]
        for (key, message) in cases {
            try key.write(to: URL(fileURLWithPath: keyPath))
            let cacheDirectory = setup.workspace.cacheDirectory + "-\(key.count)"
            let result = try await CLI.run(
                ["hls", "download", setup.origin.url(TestStreams.Kind.aes.playlist)],
                cacheDir: cacheDirectory
            )
            #expect(result.status == 1, "\(message): \(result.stderr)")
            let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("streamcache: error:") }
            #expect(errors.count == 1 && errors.first?.contains(message) == true, "\(result.stderr)")
            let listing = try await CLI.run(["hls", "ls", "--json"], cacheDir: cacheDirectory)
            let assets = try JSONSerialization.jsonObject(with: listing.stdout) as? [[String: Any]]
            let asset = try #require(assets?.first)
            #expect(asset["state"] as? String == "failed")
            let folder = try #require((asset["path"] as? NSString)?.deletingLastPathComponent)
            let segments = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".ts") }
            #expect(segments.isEmpty, "\(segments)")
            try? FileManager.default.removeItem(atPath: cacheDirectory)
        }
    }
}
