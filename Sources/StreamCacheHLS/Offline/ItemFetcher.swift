import Foundation
import StreamCache

/// Fetches runs of package files, from the streaming cache where it holds their bytes and from
/// the origin otherwise, each made durable under its final name before it counts as done.
///
/// A request that fails with a connection error, a timeout, a `5xx` or a `429` is tried again
/// after a pause (`Retry-After` where the origin gives one), at most `maxAttempts` times in a
/// row without progress; then the download fails naming the file. Nothing is skipped.
struct ItemFetcher: Sendable {
    let engine: CacheEngine
    let headers: OriginHeaders
    /// The package folder.
    let folder: String
    let maxAttempts: Int
    /// The pause before the second attempt; it doubles after that.
    let backoff: Duration

    /// A file of the run and its index in the plan.
    typealias Entry = (index: Int, item: PackageItem)
    /// Called after each file is durable, with its index and size.
    typealias Done = @Sendable (Int, Int64) async -> Void

    /// Fetches `run`: byte ranges of one origin file that follow each other, or one whole file.
    ///
    /// - Throws: ``OfflineError`` naming the first file not fetched, or `CancellationError`.
    func fetch(_ run: [Entry], done: @escaping Done) async throws {
        var remaining = run[...]
        var attempt = 0
        while !remaining.isEmpty {
            attempt += 1
            let cursor = RunCursor()
            do {
                try await fetchFromCache(remaining, cursor: cursor, done: done)
                remaining = remaining.dropFirst(cursor.completed)
                if remaining.isEmpty { return }
                cursor.completed = 0
                try await fetchFromOrigin(remaining, cursor: cursor, done: done)
                return
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if cursor.completed > 0 { attempt = 1 }
                remaining = remaining.dropFirst(cursor.completed)
                guard let first = remaining.first else { return }
                let retry = Self.retryDelay(error, attempt: attempt, backoff: backoff)
                guard let retry, attempt < maxAttempts else {
                    throw Self.failure(first.item, error, attempts: attempt)
                }
                try await Task.sleep(for: retry)
            }
        }
    }

    /// Copies the leading files of `run` that the streaming cache holds whole.
    private func fetchFromCache(_ run: ArraySlice<Entry>, cursor: RunCursor, done: Done) async throws {
        for entry in run {
            guard let url = URL(string: entry.item.url), let (info, ranges) = await engine.cachedRanges(url) else {
                return
            }
            let wanted = entry.item.range ?? info.length.map { ByteRange(offset: 0, length: $0) }
            guard let wanted, ranges.contains(wanted) else { return }
            let file = try PackageFile(path: folder + "/" + entry.item.path, isPrivate: entry.item.kind == .key)
            do {
                for try await chunk in try await engine.read(url, offset: wanted.lowerBound, length: wanted.count) {
                    try file.write(chunk[...])
                }
                guard file.written == wanted.count else { throw ShortBody() }
                try await file.commit()
            } catch {
                file.discard()
                return
            }
            cursor.completed += 1
            await done(entry.index, file.written)
        }
    }

    /// Fetches `run` in one request.
    private func fetchFromOrigin(_ run: ArraySlice<Entry>, cursor: RunCursor, done: @escaping Done) async throws {
        let entries = Array(run)
        guard let url = URL(string: entries[0].item.url) else {
            throw OfflineError(.segment, "invalid URL \(entries[0].item.url)")
        }
        let range: (first: Int64, last: Int64?)? = entries[0].item.range.map { first in
            (first.lowerBound, entries[entries.count - 1].item.range.map { $0.upperBound - 1 })
        }
        let folder = folder
        try await engine.fetchUncached(OriginRequest(url: url, range: range), headers: headers) { head, body in
            var skip = try Self.check(head, range: range)
            var writer = try RunWriter(entries: entries, folder: folder)
            for try await chunk in body {
                var bytes = chunk[...]
                if skip > 0 {
                    let dropped = min(skip, Int64(bytes.count))
                    bytes = bytes.dropFirst(Int(dropped))
                    skip -= dropped
                }
                while !bytes.isEmpty {
                    bytes = try writer.write(bytes)
                    while let finished = try await writer.commitIfFull() {
                        cursor.completed += 1
                        await done(finished.index, finished.bytes)
                    }
                    if writer.isFinished { return }
                }
            }
            if let finished = try await writer.commitAtEnd(contentLength: head.contentLength) {
                cursor.completed += 1
                await done(finished.index, finished.bytes)
            }
            guard writer.isFinished else { throw ShortBody() }
        }
    }

    /// Checks the answer; returns how many leading body bytes to skip (an origin that ignored
    /// `Range` sends the whole file).
    private static func check(_ head: OriginResponseHead, range: (first: Int64, last: Int64?)?) throws -> Int64 {
        if head.status == 429 || head.status >= 500 {
            throw RetryableStatus(status: head.status, retryAfter: head["Retry-After"].flatMap(Self.seconds))
        }
        guard let range else {
            // Judged like any answer (an encoded body is refused), and only a whole body will do.
            _ = try OriginAnswer.judge(head, first: 0, last: nil)
            guard head.status == 200 else {
                throw StreamCacheError(.originProtocolViolation, "origin answered \(head.status) to a plain GET")
            }
            return 0
        }
        switch try OriginAnswer.judge(head, first: range.first, last: range.last) {
        case .partial: return 0
        case .full: return range.first
        case .endOfResource, .notModified:
            throw StreamCacheError(.originProtocolViolation, "origin answered \(head.status) to a range request")
        }
    }

    /// `Retry-After` as seconds: a number, or an HTTP date.
    private static func seconds(_ value: String) -> Double? {
        if let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
    }

    /// How long to wait before trying again, or `nil` if trying again cannot help.
    static func retryDelay(_ error: any Error, attempt: Int, backoff: Duration) -> Duration? {
        let pause = backoff * (1 << min(attempt - 1, 6))
        switch error {
        case let status as RetryableStatus:
            return status.retryAfter.map { .milliseconds(Int64(min($0, 60) * 1000)) } ?? pause
        case let error as StreamCacheError:
            return error.isTransient ? pause : nil
        case is OfflineError:
            return nil
        default:
            // Connections reset or closed in the middle of a body.
            return pause
        }
    }

    /// Why a request failed, as the end of a one-line message.
    static func reason(for error: any Error) -> String {
        switch error {
        case let status as RetryableStatus: "origin answered \(status.status) \(HTTPStatus.reason(status.status))"
        case let error as StreamCacheError: error.message
        case let error as OfflineError: error.message
        case is ShortBody: "the origin closed the connection before the end"
        default: "\(error)"
        }
    }

    private static func failure(_ item: PackageItem, _ error: any Error, attempts: Int) -> OfflineError {
        if let error = error as? OfflineError { return error }
        let what =
            switch item.kind {
            case .segment: "segment"
            case .initialization: "init section"
            case .key: "key"
            }
        return OfflineError(
            .segment,
            "cannot fetch \(what) \(item.url) (\(item.path))"
                + (attempts > 1 ? " after \(attempts) attempts" : "") + ": \(reason(for: error))"
        )
    }
}

/// How many files of a run are done; used by one task at a time.
private final class RunCursor: @unchecked Sendable {
    var completed = 0
}

/// A `5xx` or `429`.
struct RetryableStatus: Error {
    var status: Int
    /// Seconds, from `Retry-After`.
    var retryAfter: Double?
}

/// The body ended before every byte asked for came.
struct ShortBody: Error {}
