import Foundation

/// The folders of an app's container, where an app keeps its files on Apple platforms; the
/// command-line tool (macOS included) keeps XDG's.
public enum AppContainer {
    /// Whether this process is an app with a container: any process on iOS, tvOS, visionOS and
    /// watchOS, a sandboxed one on macOS.
    public static var isApp: Bool {
        #if os(iOS) || os(tvOS) || os(visionOS) || os(watchOS)
        true
        #elseif os(macOS)
        ProcessInfo.processInfo.environment["APP_SANDBOX_CONTAINER_ID"] != nil
        #else
        false
        #endif
    }

    /// The container's `directory` (Caches, Application Support), or `nil` outside an app.
    public static func directory(for directory: FileManager.SearchPathDirectory) -> String? {
        guard isApp else { return nil }
        return FileManager.default.urls(for: directory, in: .userDomainMask).first?.path
    }
}
