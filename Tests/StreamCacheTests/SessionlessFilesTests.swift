import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// The files a server keeps open between the ranges of resources answered from the index: few
/// at most, however many resources come by, and the ones in use kept.
@Suite struct SessionlessFilesTests {
    @Test func fewStayOpenAndTheOnesInUseStay() throws {
        let folder = TestData.temporaryDirectory("resting")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = SessionlessFiles()
        /// Opens a new file and keeps it under `key`.
        func keep(_ key: String) throws {
            let path = folder + "/" + key
            try #require(FileManager.default.createFile(atPath: path, contents: Data(count: 10)))
            let (file, status) = try #require(CacheFile.openExistingLocked(path: path))
            let resource = ServableFile(
                file: file,
                info: ContentInfo(length: 10),
                written: ByteRangeSet([ByteRange(0, 10)]),
                freshUntil: .now + .seconds(60)
            )
            files.keep(resource, id: 1, seen: status.state, for: key)
        }
        let openHere = {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix(folder)
                    == true
            }.count
        }

        try keep("played")
        for number in 0..<500 {
            try keep("segment-\(number)")
            // A player reads its resource range after range while segments come and go.
            if number % 10 == 0 { #expect(files.take("played") != nil, "let go after \(number) segments") }
        }
        #expect(try openHere() <= 2 * SessionlessFiles.capacity)
        #expect(files.take("segment-499") != nil)
        #expect(files.take("segment-0") == nil)
        files.removeAll()
        #expect(try openHere() == 0)
    }
}
