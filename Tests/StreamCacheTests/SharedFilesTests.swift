import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A package file becomes a second name of the cache's data file only when the two hold the same
/// bytes, and only once the data file's bytes are durable: the package's own copy was.
@Suite struct SharedFilesTests {
    /// A package file and a data file of `bytes` each, in a folder of their own.
    struct Pair {
        let folder = NSTemporaryDirectory() + "shared-files-\(UUID().uuidString)"
        var package: String { folder + "/package.ts" }
        var data: String { folder + "/data" }

        init(package packageBytes: [UInt8], data dataBytes: [UInt8]) throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(packageBytes).write(to: URL(fileURLWithPath: package))
            try Data(dataBytes).write(to: URL(fileURLWithPath: data))
        }

        func inode(_ path: String) -> UInt64? {
            var info = stat()
            return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
        }

        func inode(of descriptor: Int32) -> UInt64? {
            var info = stat()
            return fstat(descriptor, &info) == 0 ? UInt64(info.st_ino) : nil
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    static let bytes = TestData.bytes(count: 300_000, seed: 41)

    @Test func theDataFileIsSyncedBeforeThePackageNamesIt() throws {
        let pair = try Pair(package: Self.bytes, data: Self.bytes)
        defer { pair.remove() }
        var syncs: [(ofData: Bool, packageStillItsOwn: Bool)] = []
        let shared = SharedFiles.share(pair.package, with: pair.data, length: Int64(Self.bytes.count)) { descriptor in
            syncs.append(
                (pair.inode(of: descriptor) == pair.inode(pair.data), pair.inode(pair.package) != pair.inode(pair.data))
            )
            return 0
        }
        #expect(shared)
        #expect(syncs.count == 1 && syncs[0].ofData && syncs[0].packageStillItsOwn)
        #expect(pair.inode(pair.package) == pair.inode(pair.data))
    }

    @Test func anotherNameIsGivenTheDataFileAndTheComparedFileLeftAsItWas() throws {
        let pair = try Pair(package: Self.bytes, data: Self.bytes)
        defer { pair.remove() }
        let destination = pair.folder + "/final.ts"
        let shared = SharedFiles.share(pair.package, with: pair.data, length: Int64(Self.bytes.count), as: destination)
        {
            _ in 0
        }
        #expect(shared)
        #expect(pair.inode(destination) == pair.inode(pair.data))
        #expect(pair.inode(pair.package) != pair.inode(pair.data))
        #expect(FileManager.default.contents(atPath: pair.package) == Data(Self.bytes))
    }

    @Test func aFailedSyncLeavesThePackageItsOwnCopy() throws {
        let pair = try Pair(package: Self.bytes, data: Self.bytes)
        defer { pair.remove() }
        let shared = SharedFiles.share(pair.package, with: pair.data, length: Int64(Self.bytes.count)) { _ in
            errno = EIO
            return -1
        }
        #expect(!shared)
        #expect(pair.inode(pair.package) != pair.inode(pair.data))
        #expect(FileManager.default.contents(atPath: pair.package) == Data(Self.bytes))
    }

    @Test func otherBytesAreNeitherSyncedNorShared() throws {
        var other = Self.bytes
        other[other.count - 1] ^= 1
        let pair = try Pair(package: Self.bytes, data: other)
        defer { pair.remove() }
        var synced = false
        let shared = SharedFiles.share(pair.package, with: pair.data, length: Int64(Self.bytes.count)) { _ in
            synced = true
            return 0
        }
        #expect(!shared && !synced)
        #expect(FileManager.default.contents(atPath: pair.package) == Data(Self.bytes))
    }
}
