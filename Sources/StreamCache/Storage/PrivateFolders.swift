import Foundation

/// Folders made the user's alone (0700), as XDG asks of the folders it names.
package enum PrivateFolders {
    /// Creates `path` and each missing folder above it, 0700. One that another process made
    /// first is fine.
    ///
    /// - Returns: the folder that could not be made and why (`errno`), or `nil`.
    package static func create(_ path: String) -> (folder: String, code: Int32)? {
        var missing: [String] = []
        var folder = path
        while !folder.isEmpty, folder != "/", folder != ".", !FileManager.default.fileExists(atPath: folder) {
            missing.append(folder)
            folder = LocalPath.folder(of: folder)
        }
        for folder in missing.reversed() where mkdir(folder, 0o700) != 0 {
            let code = errno
            var isDirectory: ObjCBool = false
            guard code == EEXIST, FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { return (folder, code) }
        }
        return nil
    }
}
