import Foundation
import HTTPTypes
import NIOCore
import StreamCache
import StreamCacheOffline

/// `POST /prefetch`: the running server caches the first seconds of the items a request names
/// (``CacheEngine/prefetch(_:options:library:finished:)``), in the background, while the app goes
/// on. A request takes the place of the one before: the items of the older one not fetched yet
/// are dropped and its fetches cancelled (a feed scrolled on); an empty list cancels.
///
/// The body is JSON: `{"urls": ["https://…", …], "seconds": 5, "maxBitrate": 2000000, "jobs": 2}`;
/// only `urls` is required. A request with an `Origin` field comes from a web page, which may
/// not make the server fetch: it is refused, whatever the allowed origins.
final class PrefetchRequests: Sendable {
    /// The path it answers.
    static let path = "/prefetch"

    private let engine: CacheEngine
    private let library: OfflineLibrary
    private let originHeaders: OriginHeaders
    private let current = Locked<Task<Void, Never>?>(nil)

    init(engine: CacheEngine, library: OfflineLibrary, originHeaders: OriginHeaders) {
        self.engine = engine
        self.library = library
        self.originHeaders = originHeaders
    }

    /// What the request asks, checked.
    struct Order: Decodable {
        var urls: [String]
        var seconds: Double?
        var maxBitrate: Int64?
        var jobs: Int?
    }

    /// Answers `POST /prefetch`: `202` once the prefetch has started, with the number of items.
    func answer(_ request: HTTPRequest, body: RequestBody?, exchange: inout Exchange) async throws -> ProxyResponse {
        guard request.headerFields[.origin] == nil else {
            throw ProxyRefusal(.forbidden, "a web page cannot start a prefetch")
        }
        guard let bytes = await body?.bytes() else {
            throw ProxyRefusal(.contentTooLarge, "the body is larger than \(RequestBody.limit >> 10) KiB")
        }
        let order: Order
        do {
            order = try JSONDecoder().decode(Order.self, from: Data(bytes))
        } catch {
            throw ProxyRefusal(
                .badRequest,
                "the body is not JSON of the form {\"urls\": [\"https://…\"], \"seconds\": 5}"
            )
        }
        var options = PrefetchOptions()
        options.headers = originHeaders
        if let seconds = order.seconds {
            guard seconds > 0, seconds <= PrefetchOptions.maximumSeconds else {
                throw ProxyRefusal(.badRequest, "seconds must be more than 0 and at most 86400")
            }
            options.seconds = seconds
        }
        if let jobs = order.jobs {
            guard (1...64).contains(jobs) else { throw ProxyRefusal(.badRequest, "jobs must be 1 to 64") }
            options.jobs = jobs
        }
        options.maxBitrate = order.maxBitrate
        guard order.urls.count <= PrefetchOptions.maximumItems else {
            throw ProxyRefusal(.badRequest, "at most \(PrefetchOptions.maximumItems) URLs a prefetch")
        }
        var urls: [URL] = []
        for text in order.urls {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased()) else {
                throw ProxyRefusal(.badRequest, "not an http(s) URL: \(Credentials.redacted(text))")
            }
            do {
                try CacheEngine.validate(url)
            } catch let error as StreamCacheError {
                throw ProxyRefusal(.badRequest, error.message)
            }
            urls.append(url)
        }
        start(urls, options: options)
        exchange.status = .accepted
        let text = "{\"items\":\(Set(urls.map(\.absoluteString)).count)}\n"
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        return ProxyResponse(status: .accepted, headers: fields, body: .bytes(ByteBuffer(string: text)))
    }

    /// Starts prefetching `urls` in place of what an earlier request still had to fetch.
    private func start(_ urls: [URL], options: PrefetchOptions) {
        let task: Task<Void, Never>? =
            urls.isEmpty
            ? nil
            : Task { [engine, library] in
                await engine.prefetch(urls, options: options, library: library)
            }
        current.withLock { current in
            current?.cancel()
            current = task
        }
    }

    /// Cancels what is being prefetched (the server stops).
    func cancel() {
        current.withLock { current in
            current?.cancel()
            current = nil
        }
    }
}
