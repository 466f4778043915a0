import Foundation
import StreamCacheTesting
import Testing

extension OneSuiteAtATime {
    /// `serve` as a cache in the path (RFC 9111): the player's request fields reach the origin,
    /// so a response that varies on one is reused only for a request with the same value of it
    /// (§4.1), from a session still open and from the resting cache alike; the fields it varies
    /// on go with its revalidation; the stored `Date` comes back with it (§4.2.3); and what a
    /// web page's request carries for this listener (cookies, credentials, where it came from)
    /// never reaches an origin.
    @Suite(.timeLimit(.minutes(3))) struct PlayerFieldsTests {
        static let body = "a representation for one value of Foo\n"

        @Test func aResponseThatVariesIsReusedOnlyForTheSameValues() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(
                [
                    "/v": [
                        "text": Self.body,
                        "headers": [["Cache-Control", "max-age=3600"], ["Vary", "Foo, Bar"]],
                    ]
                ],
                in: workspace
            )
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let url = proxy.url(origin.url("v"))
            /// What a request with `fields` cost the origin: requests it saw.
            func cost(_ fields: [String]) async throws -> Int {
                let before = try await origin.requests("v").count
                let reply = try await Curl.fetch(url, headers: fields)
                #expect(reply.status == 200 && String(decoding: reply.body, as: UTF8.self) == Self.body)
                return try await origin.requests("v").count - before
            }
            #expect(try await cost(["Foo: 1", "Bar: a"]) > 0)
            #expect(try await cost(["Foo: 1", "Bar: a"]) == 0, "the same values: reused")
            #expect(try await cost(["Foo: 2", "Bar: a"]) > 0, "another value of Foo")
            #expect(try await cost(["Foo: 2"]) > 0, "Bar left out")
            #expect(try await cost(["Foo: 2"]) == 0)
            #expect(try await cost(["Foo: 2", "Other: x"]) == 0, "a field it does not vary on")
            // Once the session has closed, the answer comes from the resting cache: the same check.
            try await Task.sleep(for: .seconds(4))
            #expect(try await cost(["Foo: 2"]) == 0)
            try await Task.sleep(for: .seconds(4))
            #expect(try await cost(["Foo: 3"]) > 0, "another value, from the resting cache")
            let seen = try await origin.requests("v").flatMap { $0.values("Foo") }
            #expect(Set(seen) == ["1", "2", "3"], "the origin saw Foo as \(seen)")
            try await proxy.stop()
        }

        @Test func theFieldsItVariesOnGoWithTheRevalidationAndTheDateComesBack() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(
                [
                    "/r": [
                        "text": Self.body,
                        "headers": [["Cache-Control", "max-age=1"], ["ETag", "\"r1\""], ["Vary", "Foo"]],
                    ],
                    "/d": ["text": Self.body, "headers": [["Cache-Control", "max-age=3600"]]],
                ],
                in: workspace
            )
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            _ = try await Curl.fetch(proxy.url(origin.url("r")), headers: ["Foo: 1"])
            try await Task.sleep(for: .seconds(2))
            let again = try await Curl.fetch(proxy.url(origin.url("r")), headers: ["Foo: 1"])
            #expect(String(decoding: again.body, as: UTF8.self) == Self.body)
            let revalidation = try await origin.requests("r").last
            #expect(revalidation?.conditional == true, "the stale answer was not revalidated")
            #expect(revalidation?.values("Foo") == ["1"], "the revalidation went without Foo")

            let first = try await Curl.fetch(proxy.url(origin.url("d")))
            let cached = try await Curl.fetch(proxy.url(origin.url("d")))
            #expect(try await origin.requests("d").count == 1)
            #expect(first.headers["date"] != nil)
            #expect(cached.headers["date"] == first.headers["date"], "the origin's Date did not come back")
            try await proxy.stop()
        }

        @Test func whatAPageSendsForThisListenerNeverReachesAnOrigin() async throws {
            let workspace = Workspace()
            defer { workspace.remove() }
            let origin = try await ScriptedOrigin(["/p": ["text": Self.body, "headers": []]], in: workspace)
            let proxy = try await ListeningProcess(["serve"], cacheDir: workspace.cacheDirectory)
            let sent = [
                "Cookie: session=local", "Authorization: Bearer local", "Referer: http://127.0.0.1:\(proxy.port)/",
                "Icy-MetaData: 1", "Accept-Language: de", "Connection: keep-alive, X-Hop", "X-Hop: 1",
            ]
            _ = try await Curl.fetch(proxy.url(origin.url("p")), headers: sent)
            let seen = try #require(try await origin.requests("p").first)
            for name in ["Cookie", "Authorization", "Referer", "Icy-MetaData", "X-Hop"] {
                #expect(seen.values(name).isEmpty, "\(name) reached the origin")
            }
            #expect(seen.values("Accept-Language") == ["de"])
            #expect(seen.values("Accept-Encoding") == ["identity"])
            try await proxy.stop()
        }
    }
}
