import Foundation

/// The files of `Tests/Fixtures`: test origins, generators and their data.
enum Fixtures {
    /// The path of `name` in `Tests/Fixtures`.
    static func path(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/" + name).path
    }
}
