import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A cache file's status read at most some time ago: shared by the reads of a moment, read
/// again once older.
@Suite struct FileStatusTests {
    @Test func aRecentStatusIsSharedAndAnOlderOneReadAgain() throws {
        let folder = TestData.temporaryDirectory("status")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/1"
        try #require(FileManager.default.createFile(atPath: path, contents: Data(count: 1000)))
        let (file, status) = try #require(CacheFile.openExistingLocked(path: path))
        #expect(status.size == 1000)
        truncate(path, 10)
        let opened = ContinuousClock.now
        #expect(file.status(readWithin: .seconds(60), now: opened)?.size == 1000, "read again within the age")
        #expect(file.status(readWithin: .zero, now: opened + .milliseconds(1))?.size == 10)
        #expect(file.status(readWithin: .seconds(60))?.size == 10, "the last read is the one kept")
        #expect(!file.holds(ByteRange(0, 1000)))
    }
}
