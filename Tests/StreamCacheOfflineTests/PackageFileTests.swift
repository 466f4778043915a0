import Foundation
import StreamCache
import StreamCacheOfflineCore
import StreamCacheTesting
import Testing

/// A package file is named only once its bytes are durable: its own copy, synced, or the
/// cache's data file under a second name, when the two hold the same bytes, with the copy
/// dropped unsynced (the disk writes the file once).
@Suite struct PackageFileTests {
    static let bytes = TestData.bytes(count: 200_000, seed: 7)

    /// A folder with a cache data file of `data`, and a package file of ``bytes`` written and
    /// not committed, whose syncs are counted.
    struct Folder {
        let path = NSTemporaryDirectory() + "package-file-\(UUID().uuidString)"
        var data: String { path + "/data" }
        var final: String { path + "/00000.ts" }
        let syncs = Locked(0)
        let file: PackageFile

        init(data dataBytes: [UInt8]) throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Data(dataBytes).write(to: URL(fileURLWithPath: path + "/data"))
            let syncs = syncs
            file = try PackageFile(path: path + "/00000.ts") { _ in
                syncs.withLock { $0 += 1 }
                return 0
            }
            try file.write(PackageFileTests.bytes[...])
        }

        /// Commits the file, sharing it with the data file where the bytes match.
        func commit() async throws {
            try await file.commit { written in
                SharedFiles.share(written, with: data, length: Int64(PackageFileTests.bytes.count), as: final) { _ in 0
                }
            }
        }

        func inode(_ path: String) -> UInt64? {
            var info = stat()
            return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func aFileTheCacheHoldsIsItsDataFileAndItsCopyIsNeverSynced() async throws {
        let folder = try Folder(data: Self.bytes)
        defer { folder.remove() }
        try await folder.commit()
        #expect(folder.inode(folder.final) == folder.inode(folder.data))
        #expect(!FileManager.default.fileExists(atPath: folder.final + ".partial"))
        #expect(folder.syncs.value == 0, "the copy the data file stands for was synced")
        #expect(FileManager.default.contents(atPath: folder.final) == Data(Self.bytes))
    }

    @Test func otherBytesInTheCacheLeaveThePackageItsOwnSyncedCopy() async throws {
        var other = Self.bytes
        other[100_000] ^= 1
        let folder = try Folder(data: other)
        defer { folder.remove() }
        try await folder.commit()
        #expect(folder.inode(folder.final) != folder.inode(folder.data))
        #expect(folder.syncs.value == 1)
        #expect(FileManager.default.contents(atPath: folder.final) == Data(Self.bytes))
        #expect(!FileManager.default.fileExists(atPath: folder.final + ".partial"))
    }
}
