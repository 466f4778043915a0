import Foundation

/// The third-party playlists in `Tests/Fixtures/hls` (each folder keeps its licence).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/hls")

    /// Every `.m3u8` file, by name (`grafov/master.m3u8`).
    static var playlists: [String] {
        let files = FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []
        return files.filter { $0.hasSuffix(".m3u8") }.sorted()
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }
}
