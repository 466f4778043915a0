import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StreamCache

/// One response from AsyncHTTPClient, received on its event loop and taken by the fetch.
///
/// The event loop goes on receiving while the fetch writes what came before: body parts queue up
/// to `limit` bytes before the connection is asked to wait. The fetch takes whatever has arrived
/// in one run (up to `runLimit` bytes), so a fast origin costs one hop per run, not one per
/// socket read.
///
/// The limit, 1 MiB, bounds what a fetch cut short throws away (another fetch writes on from
/// there, or its readers left): bytes the origin sent, the queue held and nobody wrote. The
/// queue fills only while the origin sends faster than the cache writes; a reader that comes
/// that far ahead of so fast a fetch waits for it rather than start its own (the engine's join
/// distance grows with the rate), so cuts there are rare. A larger limit saves no CPU.
/// Past `minimum` the queue holds more only while its client's ``QueueBudget`` lasts, so many
/// fetches at once hold the budget between them, not 1 MiB each.
final class ResponseQueue: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    private let limit: Int
    private let minimum: Int
    private let runLimit: Int
    private let budget: QueueBudget
    private let state = Locked(State())

    /// What the two sides share.
    private struct State {
        var head: HTTPResponseHead?
        var parts: [ByteBuffer] = []
        var queued = 0
        /// How the response ended: `nil` while it goes on.
        var end: Result<Void, Error>?
        var headWaiter: CheckedContinuation<HTTPResponseHead, Error>?
        var bodyWaiter: CheckedContinuation<[UInt8]?, Error>?
        /// The event loop's wait for room in the queue.
        var room: EventLoopPromise<Void>?
    }

    init(budget: QueueBudget, limit: Int = 1 << 20, minimum: Int = 64 << 10, runLimit: Int = 512 << 10) {
        self.budget = budget
        self.limit = limit
        self.minimum = minimum
        self.runLimit = runLimit
    }

    /// What the queue still holds is given back to the budget (a response given up).
    deinit {
        budget.add(-state.value.queued)
    }

    // MARK: The fetch's side

    /// Waits for the response head.
    func responseHead() async throws -> HTTPResponseHead {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<HTTPResponseHead, Error>? = state.withLock { state in
                if let head = state.head { return .success(head) }
                switch state.end {
                case .success: return .failure(HTTPClientError.remoteConnectionClosed)
                case .failure(let error): return .failure(error)
                case nil:
                    state.headWaiter = continuation
                    return nil
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// The body bytes that have arrived since the last call, waiting for some if none have;
    /// `nil` at the end of the body.
    func nextRun() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            let (outcome, freed) = state.withLock {
                state -> (Result<[UInt8]?, Error>?, EventLoopPromise<Void>?) in
                if !state.parts.isEmpty { return (.success(takeRun(&state)), freeRoomIfNotFull(&state)) }
                switch state.end {
                case .success: return (.success(nil), nil)
                case .failure(let error): return (.failure(error), nil)
                case nil:
                    state.bodyWaiter = continuation
                    return (nil, nil)
                }
            }
            freed?.succeed(())
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Up to `runLimit` bytes of the queued parts, as one array.
    private func takeRun(_ state: inout State) -> [UInt8] {
        var run: [UInt8] = []
        run.reserveCapacity(min(state.queued, runLimit))
        var taken = 0
        while taken < state.parts.count, run.isEmpty || run.count + state.parts[taken].readableBytes <= runLimit {
            run.append(contentsOf: state.parts[taken].readableBytesView)
            taken += 1
        }
        state.parts.removeFirst(taken)
        state.queued -= run.count
        budget.add(-run.count)
        return run
    }

    private func freeRoomIfNotFull(_ state: inout State) -> EventLoopPromise<Void>? {
        guard let waiting = state.room, !isFull(state) else { return nil }
        state.room = nil
        return waiting
    }

    /// Whether the event loop waits before it receives more: the queue holds its limit, or its
    /// minimum while the client's budget is spent.
    private func isFull(_ state: State) -> Bool {
        state.queued >= limit || (state.queued >= minimum && budget.isSpent)
    }

    // MARK: AsyncHTTPClient's side, on its event loop

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let waiter = state.withLock { state in
            state.head = head
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: head)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (waiter, wait) = state.withLock {
            state -> (CheckedContinuation<[UInt8]?, Error>?, EventLoopFuture<Void>?) in
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                return (waiter, nil)
            }
            state.parts.append(buffer)
            state.queued += buffer.readableBytes
            budget.add(buffer.readableBytes)
            guard isFull(state) else { return (nil, nil) }
            let promise = task.eventLoop.makePromise(of: Void.self)
            state.room = promise
            return (nil, promise.futureResult)
        }
        waiter?.resume(returning: Array(buffer.readableBytesView))
        return wait ?? task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: Error) {
        finish(.failure(error))
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        finish(.success(()))
    }

    private func finish(_ outcome: Result<Void, Error>) {
        let (headWaiter, bodyWaiter, room) = state.withLock { state in
            state.end = outcome
            defer {
                state.headWaiter = nil
                state.bodyWaiter = nil
                state.room = nil
            }
            return (state.headWaiter, state.bodyWaiter, state.room)
        }
        room?.succeed(())
        switch outcome {
        case .success:
            headWaiter?.resume(throwing: HTTPClientError.remoteConnectionClosed)
            bodyWaiter?.resume(returning: nil)
        case .failure(let error):
            headWaiter?.resume(throwing: error)
            bodyWaiter?.resume(throwing: error)
        }
    }
}
