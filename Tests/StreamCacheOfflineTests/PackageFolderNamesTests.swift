import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCacheOfflineCore

/// No two tracks of a package share a folder, whatever their languages say, compared without
/// regard to case.
@Suite struct PackageFolderNamesTests {
    @Test func languagesThatLookAlikeGetFoldersOfTheirOwn() {
        var names = PackageFolderNames()
        let given = ["en-3", "en", "EN", "en", "en-2"].map { names.claim("audio", language: $0) }
        #expect(given == ["audio-en-3", "audio-en", "audio-en-2", "audio-en-4", "audio-en-2-2"])
    }

    @Test(arguments: 0..<50)
    func randomLanguagesNeverShareAFolder(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        var names = PackageFolderNames()
        var given: [String] = []
        for _ in 0..<40 {
            let kind = ["audio", "subtitles", "video"].randomElement(using: &random)!
            let language = ["en", "EN", "en-2", "en-3", "de", "De-2", "", "é", "en-2-2"].randomElement(using: &random)!
            given.append(names.claim(kind, language: language))
        }
        #expect(Set(given.map { $0.lowercased() }).count == given.count, "seed \(seed): \(given)")
    }
}
