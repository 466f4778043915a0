import Foundation
import StreamCache
import Testing

@testable import StreamCacheServer

@Suite struct LogFieldTests {
    @Test func plainTokensStayAndEverythingElseIsQuoted() {
        #expect(W3CLog.field("GET") == "GET")
        #expect(W3CLog.field("/https://example.com/a.mp3") == "/https://example.com/a.mp3")
        #expect(W3CLog.field("origin timed out") == "\"origin timed out\"")
        #expect(W3CLog.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(W3CLog.field("") == "\"\"")
        // A CR/LF in a value can never start a new log line.
        #expect(W3CLog.field("a\r\nforged 200") == "\"a  forged 200\"")
    }

    @Test func timestampsAreUTC() {
        #expect(W3CLog.timestamp(Date(timeIntervalSince1970: 1_795_000_000)) == "2026-11-18 11:06:40")
    }

    @Test func aLogStartsWithItsDirectivesAndAppends() async throws {
        let path = NSTemporaryDirectory() + "w3c-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try W3CLog(path: path, fields: ["cs-method", "sc-status", "x-reason"])
        await log.write(["GET", "200", nil])
        await log.write(["HEAD", "502", "origin refused"])
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines[0] == "#Version: 1.0")
        #expect(lines[3] == "#Fields: cs-method sc-status x-reason")
        #expect(lines[4] == "GET 200 -")
        #expect(lines[5] == "HEAD 502 \"origin refused\"")
        #expect(throws: ProxyLogError.self) { try W3CLog(path: "/nonexistent-dir/x.log", fields: []) }
    }

    @Test func originHeaderRulesApplyToAllOrOneHost() throws {
        let all = try #require(OriginHeaders.Rule(parsing: "User-Agent: Podcasts/1.0"))
        let one = try #require(OriginHeaders.Rule(parsing: "cdn.example=Authorization: Bearer x=y"))
        #expect(one.host == "cdn.example")
        let headers = OriginHeaders([all, one])
        let cdn = URL(string: "https://CDN.example/a")!
        let other = URL(string: "https://other.example/a")!
        #expect(headers.fields(for: cdn, firstURL: cdn).count == 2)
        #expect(headers.fields(for: other, firstURL: other).count == 1)
        // After a redirect to another origin, only the headers for that host go along.
        #expect(headers.fields(for: cdn, firstURL: other).map(\.name) == ["Authorization"])
        #expect(headers.fields(for: other, firstURL: cdn).isEmpty)
        for bad in ["no colon", ": empty name", "=Name: v", "Bad Name: v", "Name: a\r\nInjected: 1"] {
            #expect(OriginHeaders.Rule(parsing: bad) == nil, "\(bad)")
        }
    }

    /// Logs hold the URLs a user played: only that user may read them.
    @Test func aNewLogFileIsTheUsersAlone() throws {
        let path = NSTemporaryDirectory() + "/log-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try W3CLog(path: path, fields: ["date"])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o777 } == 0o600)
    }
}
