import Foundation

/// The file name a URL gives a download (`get -O`, `export URL FOLDER/`), as curl `-O` takes it.
///
/// Every name StreamCache takes from a URL comes from here: the last segment of the URL's path as
/// it is written, percent-encoding kept (`..%2f.bashrc` stays that name, never `../.bashrc`),
/// without the query or fragment. A name that would leave the folder it is written in, or that
/// the file system cannot hold, is none.
package enum RemoteFileName {
    /// The longest name most file systems hold, in bytes (`NAME_MAX`).
    package static let maximumLength = 255

    /// The name for `url`, or `nil` when its path names no file (`/`, `.`, `..`, a name with a
    /// control character or longer than ``maximumLength`` bytes).
    package static func of(_ url: URL) -> String? {
        let path = url.path(percentEncoded: true)
        guard let name = path.split(separator: "/", omittingEmptySubsequences: false).last else { return nil }
        return accepted(String(name))
    }

    /// `name` if it is one entry of a folder that stays in that folder, else `nil`.
    package static func accepted(_ name: String) -> String? {
        guard !name.isEmpty, name != ".", name != "..", name.utf8.count <= maximumLength,
            !name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 < 0x20 || $0 == 0x7F })
        else { return nil }
        return name
    }
}
