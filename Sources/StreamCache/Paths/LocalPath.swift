/// Path arithmetic on local file paths, as plain strings, for any path a user or a URL can give.
///
/// Foundation's `NSString.deletingLastPathComponent` traps on Linux for a one-character relative
/// path (`x`, `c`), and its other path functions tidy paths in ways a user did not ask for; every
/// path operation of StreamCache goes through these instead.
package enum LocalPath {
    /// The folder that holds `path`: `"."` for a name without a folder, `"/"` for one at the root.
    ///
    /// Trailing slashes name the same entry (`a/b/` is `a/b`); repeated slashes count as one.
    package static func folder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        var folder = trimmed[..<slash]
        while folder.last == "/" { folder = folder.dropLast() }
        return folder.isEmpty ? "/" : String(folder)
    }

    /// The last entry of `path` (`b` of `a/b/`), `""` for `""` and `"/"` for the root.
    package static func lastComponent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `name` inside `folder`, with one slash between them.
    package static func appending(_ name: String, to folder: String) -> String {
        guard !folder.isEmpty else { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// `path` with `.` entries, repeated and trailing slashes taken out (`./a//b/` is `a/b`);
    /// `..` entries are kept, since a symlink before them decides where they lead.
    package static func tidied(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        let parts = path.split(separator: "/").filter { $0 != "." }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension LocalPath {
    /// Opens the regular file `relative` inside `folder` for reading, following no symlink on the
    /// way (a link planted in a package folder never leads out of it): every entry is opened with
    /// `O_NOFOLLOW` from the one before.
    ///
    /// - Returns: the descriptor, or `-1` with `errno` set (`ELOOP` for a link, `EISDIR` or
    ///   `EINVAL` for what is not a regular file, `ENOENT` for `..`).
    package static func openBeneath(_ folder: String, _ relative: String) -> Int32 {
        let parts = relative.split(separator: "/")
        guard !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else {
            errno = ENOENT
            return -1
        }
        var current = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { return -1 }
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            let flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (isLast ? O_NONBLOCK : O_DIRECTORY)
            let next = openat(current, String(part), flags)
            let code = errno
            close(current)
            guard next >= 0 else {
                errno = code
                return -1
            }
            current = next
        }
        var status = stat()
        guard fstat(current, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(current)
            errno = EINVAL
            return -1
        }
        // O_NONBLOCK kept a FIFO from blocking the open; reads of a regular file never block.
        _ = fcntl(current, F_SETFL, fcntl(current, F_GETFL) & ~O_NONBLOCK)
        return current
    }
}
