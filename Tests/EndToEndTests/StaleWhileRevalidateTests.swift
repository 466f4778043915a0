import Foundation
import StreamCacheTesting
import Testing

/// A stale response within its `stale-while-revalidate` window is served at once and checked
/// with the origin meanwhile; past the window it is checked first (RFC 5861 §3).
@Suite(.timeLimit(.minutes(2))) struct StaleWhileRevalidateTests {
    static func file(shift: Int, control: String) -> [String: Any] {
        ["size": 20_000, "shift": shift, "headers": [["Cache-Control", control], ["ETag", "\"v\(shift)\""]]]
    }

    static func body(shift: Int) -> [UInt8] { (0..<20_000).map { UInt8(($0 + shift) % 251) } }

    @Test func withinTheWindowTheStaleCopyIsServedWhileItIsChecked() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let control = "max-age=1, stale-while-revalidate=60"
        let origin = try await ScriptedOrigin(["/s.bin": Self.file(shift: 0, control: control)], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("s.bin"))
        _ = try await Curl.fetch(url)
        try await Task.sleep(for: .milliseconds(1500))
        try origin.rescript(["/s.bin": Self.file(shift: 7, control: control)])

        let stale = try await Curl.fetch(url)
        let staleIsOld = Array(stale.body) == Self.body(shift: 0)
        #expect(staleIsOld, "within the window, the read waited for the origin")
        // The check runs meanwhile; once it has, the new version is what is served.
        var checked = false
        for _ in 0..<50 where !checked {
            try await Task.sleep(for: .milliseconds(100))
            checked = try await origin.requests("s.bin").count >= 2
        }
        #expect(checked, "nothing asked the origin about the stale copy")
        try await Task.sleep(for: .milliseconds(300))
        let next = try await Curl.fetch(url)
        let nextIsNew = Array(next.body) == Self.body(shift: 7)
        #expect(nextIsNew, "the check's new version was not taken")
        try await proxy.stop()
    }

    @Test func pastTheWindowTheStaleCopyIsCheckedFirst() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let control = "max-age=1, stale-while-revalidate=1"
        let origin = try await ScriptedOrigin(["/s.bin": Self.file(shift: 0, control: control)], in: workspace)
        let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
        let url = proxy.url(origin.url("s.bin"))
        _ = try await Curl.fetch(url)
        try await Task.sleep(for: .milliseconds(2500))
        try origin.rescript(["/s.bin": Self.file(shift: 7, control: control)])

        let played = try await Curl.fetch(url)
        let playedIsNew = Array(played.body) == Self.body(shift: 7)
        #expect(playedIsNew, "past its window, the stale copy was served unchecked")
        try await proxy.stop()
    }
}
