import Foundation
import StreamCache

/// How a live stream is recorded (`hls download` of a playlist without `EXT-X-ENDLIST`).
public struct RecordingOptions: Sendable {
    /// Stop after this much recorded media.
    public var duration: Duration?
    /// Stop at this time.
    public var until: Date?
    /// Begin with the oldest segment the playlist lists (an `EVENT` playlist's first) rather
    /// than at the live edge.
    public var fromStart = false
    /// Ends the recording from outside: the package is finished as it is.
    public var stop = RecordingStop()

    public init() {}
}

/// Ends a recording from outside (SIGINT, SIGTERM, an app's stop button): what was recorded is
/// finished into a package that plays as VOD. Also wakes a recorder that waits for the origin's
/// next reload.
public final class RecordingStop: Sendable {
    private struct State {
        package var reason: String?
        package var isRecording = false
        package var sleepers: [Int: CheckedContinuation<Void, Never>] = [:]
        package var nextSleeper = 0
    }

    private let state = Locked(State())

    public init() {}

    /// Asks the recording to end; the first reason given is kept.
    public func request(_ reason: String = "stopped") {
        let sleepers = state.withLock { state in
            if state.reason == nil { state.reason = reason }
            defer { state.sleepers = [:] }
            return state.sleepers
        }
        for sleeper in sleepers.values { sleeper.resume() }
    }

    /// Why the recording was asked to end; `nil` until it is.
    public var reason: String? { state.value.reason }

    /// Whether a recording runs now and would end on ``request(_:)``.
    public var isRecording: Bool { state.value.isRecording }

    package func setRecording(_ recording: Bool) {
        state.withLock { $0.isRecording = recording }
    }

    /// `body`'s result if it comes within `limit` and before the recording is asked to end; else
    /// `body` is cancelled and `nil` returned. A request that trickles (a byte every few
    /// seconds, never idle long enough to time out) thus holds a recording past neither.
    package func bounded<T: Sendable>(
        by limit: Duration,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                await self.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Waits `duration`, or less if the recording is asked to end meanwhile.
    package func sleep(for duration: Duration) async {
        let deadline = ContinuousClock.now + duration
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            group.addTask { await self.waitForRequest() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForRequest() async {
        let id = state.withLock { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.reason != nil || Task.isCancelled { return true }
                    state.sleepers[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.resume()
        }
    }
}

/// What ends a recording by the clock, whatever the origin does: `until`, and `duration` also on
/// the clock (recorded time is what counts, but an origin that stalls or paces itself slowly
/// ends it at the latest when half as long again, a minute at least, has passed).
package struct RecordingClocks: Sendable {
    private let tasks: [Task<Void, Never>]

    /// Starts the clocks of `options`.
    package init(_ options: RecordingOptions) {
        let stop = options.stop
        var tasks: [Task<Void, Never>] = []
        if let date = options.until {
            tasks.append(
                Task {
                    let wait = date.timeIntervalSinceNow
                    if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
                    if !Task.isCancelled { stop.request("until") }
                }
            )
        }
        if let limit = options.duration {
            tasks.append(
                Task {
                    try? await Task.sleep(for: limit + max(.seconds(60), limit / 2))
                    if !Task.isCancelled { stop.request("duration") }
                }
            )
        }
        self.tasks = tasks
    }

    /// Stops the clocks: the recording ended.
    package func cancel() {
        for task in tasks { task.cancel() }
    }
}

extension Duration {
    /// The duration in seconds.
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
