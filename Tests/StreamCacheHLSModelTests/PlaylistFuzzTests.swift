import Foundation
import StreamCacheHLSModel
import Testing

/// Random mutations of the fixtures: the parser either reads a playlist that round-trips or says
/// which line is wrong; it never crashes or hangs.
@Suite struct PlaylistFuzzTests {
    @Test func mutatedFixturesNeverCrashTheParser() async throws {
        var generator = SeededGenerator(seed: 2026)
        // The large fixture only slows the rounds down: its lines are like the others'.
        let texts = try Fixtures.playlists.map(Fixtures.text).filter { $0.utf8.count < 100_000 } + RFC8216Examples.all
        let pieces = [
            "\"", ",", "=", "@", ":", "\n", "\r\n", "#EXT-X-KEY:", "#EXTINF:", "{$x}", "-1", "99999999999999999999",
            "\u{0}", "é", "#EXT-X-BYTERANGE:7",
        ]
        var parsed = 0
        var failed = 0
        for round in 0..<3000 {
            // Leaves the cooperative pool to the timed tests beside it now and then.
            if round % 100 == 0 { await Task.yield() }
            var bytes = Array(texts[round % texts.count].utf8)
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes.remove(at: at)
                case 1: bytes[at] = UInt8.random(in: 0...255, using: &generator)
                case 2: bytes.insert(contentsOf: Array(pieces.randomElement(using: &generator)!.utf8), at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &generator)))
                }
            }
            do throws(HLSParseError) {
                let playlist = try Playlist(parsing: bytes)
                let again = try Playlist(parsing: playlist.text)
                #expect(again == playlist, "round \(round) does not round-trip")
                parsed += 1
            } catch {
                #expect(!error.reason.isEmpty)
                failed += 1
            }
        }
        #expect(parsed > 100 && failed > 100, "parsed \(parsed), refused \(failed)")
    }
}
