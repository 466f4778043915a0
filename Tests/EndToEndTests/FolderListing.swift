import Foundation

/// What a package folder holds, to tell which files a later run wrote again.
enum FolderListing {
    /// Each regular file under `folder`, by its path relative to it, with its modification time.
    static func modificationTimes(in folder: String) throws -> [String: Date] {
        var files: [String: Date] = [:]
        let manager = FileManager.default
        for case let path as String in manager.enumerator(atPath: folder)! {
            let attributes = try manager.attributesOfItem(atPath: folder + "/" + path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            files[path] = attributes[.modificationDate] as? Date
        }
        return files
    }
}
