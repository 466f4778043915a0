import NIOCore

/// What a proxy connection is doing, as a pure state machine: ``ProxyConnectionHandler`` feeds it
/// the connection's events and carries out the actions it returns.
///
/// A connection reads requests one after another (the head, perhaps a body, the end) and owes an
/// answer to each, in the order they came. An answer comes from the cache on the event loop
/// (a cache hit: written whole at once) or from the responder, which runs in a task and answers one
/// request at a time; requests read meanwhile wait their turn, and a cache hit is tried only
/// when none waits. It closes:
/// * after the answer to a request that asks for it (HTTP/1.0 without keep-alive,
///   `Connection: close`, a refused request); requests read after such a one are dropped
///   unanswered (RFC 9112 §9.6);
/// * after the idle timeout without a request part while no answer is owed: idle keep-alive, a
///   head or body trickled in forever. An answer being made or written is never cut by it;
/// * on graceful shutdown, at once when no answer is owed, else once the last is written; a
///   request read after it began is dropped unanswered, as NIO's `HTTPServerPipelineHandler`
///   drops it, and the last answer owed says `Connection: close` (``answersLast``);
/// * when an answer could not be written whole (the client sees the connection close).
///
/// Its state is one ``State``: whether it takes requests, and, unless closed, what it owes
/// (``Exchanges``); a closed connection owes nothing and keeps nothing. Every event returns an
/// ``Action``, and the handler carries out every action there is.
///
/// `Request` is what the responder needs of a request; the machine only keeps and hands it back.
struct ProxyConnection<Request> {
    enum Action {
        case none
        /// Answer this request from the cache if it can be (``cacheHitAnswered(inFlight:now:)``),
        /// else hand it back (``cacheHitDeclined(_:)``).
        case answerFromCache(Request)
        /// Run the responder for this request; `resumeReading` when reading had stopped.
        case startResponder(Request, resumeReading: Bool)
        /// Stop reading: as many requests wait as the connection keeps.
        case stopReading
        /// Say when the cache hit just answered has gone out (``cacheHitWritten(now:)``).
        case reportWhenWritten
        case close
        /// Look again at this time (``idleCheck(now:)``).
        case checkAt(NIODeadline)
        /// Let the answer's body go on: the connection takes more bytes again.
        case resumeWriters
        /// The connection is gone: fail the answer's writes that wait for room, and cancel the
        /// responder's answer in progress if `cancelAnswer`.
        case endAnswers(cancelAnswer: Bool)
    }

    /// Whether the connection takes more requests, and what it owes.
    enum State {
        case open(Exchanges)
        /// Graceful shutdown: the requests read are answered, then the connection closes.
        case quiescing(Exchanges)
        /// A request asked to close: it is answered, those after it are dropped.
        case closingAfterAnswers(Exchanges)
        case closed
    }

    /// What an open connection is reading and owes.
    struct Exchanges {
        var reading = Reading.betweenRequests
        var responder = Responder.idle
        /// Cache hits written whose bytes have not all gone out (those sent from a file, and the
        /// last before a close).
        var cacheHitWritesInFlight = 0
        /// Whether the connection takes more bytes now.
        var writable = true

        /// Whether an answer is owed or being written.
        var owesAnswers: Bool {
            if case .answering = responder { return true }
            return cacheHitWritesInFlight > 0
        }

        /// Whether the responder owes an answer: a cache hit now would overtake it.
        var owesResponderAnswers: Bool {
            if case .answering = responder { return true }
            if case .request = reading { return true }
            return false
        }

        /// Whether nothing is owed or being read: a connection that is to close can now.
        var isDone: Bool {
            guard !owesAnswers else { return false }
            switch reading {
            case .betweenRequests, .discarding: return true
            case .request, .offeredToCache: return false
            }
        }
    }

    /// What the connection does with the request parts it reads.
    enum Reading {
        /// Nothing read of the next request yet.
        case betweenRequests
        /// A request whose head was read and whose end was not, for the responder.
        case request(Request)
        /// A request offered to the cache hits, which has not said yet.
        case offeredToCache
        /// The rest of a request already answered or dropped.
        case discarding
    }

    /// The responder: idle, or answering a request with whole requests waiting behind it.
    enum Responder {
        case idle
        case answering(waiting: [Request])
    }

    /// Requests waiting behind the one answered before the connection stops reading (a client
    /// pipelining without end). Requests the decoder holds already parsed still come after it
    /// stops: the bound is on reads, not on this count.
    static var mostWaiting: Int { 16 }

    let idleTimeout: TimeAmount
    private(set) var state = State.open(Exchanges())
    /// When the last request part was read or the last answer ended.
    private var lastActivity: NIODeadline

    init(idleTimeout: TimeAmount, now: NIODeadline) {
        self.idleTimeout = idleTimeout
        self.lastActivity = now
    }

    /// When to look first.
    var firstCheck: Action { .checkAt(lastActivity + idleTimeout) }

    /// Whether the answer begun now is the connection's last, once the server asked it to
    /// finish: no request waits behind it, and none is being read. It says `Connection: close`,
    /// whatever its own request asked.
    var answersLast: Bool {
        guard case .quiescing(let exchanges) = state else { return false }
        if case .answering(let waiting) = exchanges.responder, !waiting.isEmpty { return false }
        switch exchanges.reading {
        case .betweenRequests, .discarding: return true
        case .request, .offeredToCache: return false
        }
    }

    /// Whether an answer is owed or being written: the client waits on the connection, which is
    /// not idle.
    var owesAnswers: Bool { exchanges?.owesAnswers ?? false }

    /// Whole requests waiting for the responder.
    var waiting: [Request] {
        if case .answering(let waiting)? = exchanges?.responder { return waiting }
        return []
    }

    /// Whether the connection takes more bytes now (a closed one takes none).
    var isWritable: Bool { exchanges?.writable ?? false }

    // MARK: Reading

    /// A request's head was read; `closes` when the connection closes after its answer.
    mutating func headRead(_ request: Request, closes: Bool, now: NIODeadline) -> Action {
        switch state {
        case .closed:
            return .none
        case .quiescing(var exchanges):
            // Once the server asked to finish: not answered.
            exchanges.reading = .discarding
            state = .quiescing(exchanges)
            return .none
        case .closingAfterAnswers(var exchanges):
            // After a request that closes: not answered.
            exchanges.reading = .discarding
            state = .closingAfterAnswers(exchanges)
            return .none
        case .open(var exchanges):
            lastActivity = now
            let action: Action
            if exchanges.owesResponderAnswers {
                exchanges.reading = .request(request)
                action = .none
            } else {
                exchanges.reading = .offeredToCache
                action = .answerFromCache(request)
            }
            state = closes ? .closingAfterAnswers(exchanges) : .open(exchanges)
            return action
        }
    }

    /// The cache hits answered the request offered (``Action/answerFromCache(_:)``); `inFlight` when
    /// its bytes go out after this (``cacheHitWritten(now:)`` follows).
    mutating func cacheHitAnswered(inFlight: Bool, now: NIODeadline) -> Action {
        if case .closed = state { return .none }
        lastActivity = now
        return update { exchanges, closing in
            guard case .offeredToCache = exchanges.reading else {
                preconditionFailure("no request was offered to the cache hits")
            }
            exchanges.reading = .discarding
            // A connection that closes after this answer closes once its bytes have gone out.
            let watched = inFlight || closing
            if watched { exchanges.cacheHitWritesInFlight += 1 }
            return watched ? .reportWhenWritten : .none
        }
    }

    /// The cache hits did not answer the request offered: the responder will, once its end is read.
    mutating func cacheHitDeclined(_ request: Request) -> Action {
        update { exchanges, _ in
            guard case .offeredToCache = exchanges.reading else {
                preconditionFailure("no request was offered to the cache hits")
            }
            exchanges.reading = .request(request)
            return .none
        }
    }

    /// A part of a request's body was read.
    mutating func bodyRead(now: NIODeadline) -> Action {
        if case .closed = state { return .none }
        lastActivity = now
        return .none
    }

    /// A request's end was read.
    mutating func endRead(now: NIODeadline) -> Action {
        if case .closed = state { return .none }
        lastActivity = now
        return update { exchanges, _ in
            switch exchanges.reading {
            case .betweenRequests, .discarding:
                exchanges.reading = .betweenRequests
                return .none
            case .offeredToCache:
                preconditionFailure("the cache hits have not answered")
            case .request(let request):
                exchanges.reading = .betweenRequests
                switch exchanges.responder {
                case .idle:
                    exchanges.responder = .answering(waiting: [])
                    return .startResponder(request, resumeReading: false)
                case .answering(var waiting):
                    waiting.append(request)
                    exchanges.responder = .answering(waiting: waiting)
                    return waiting.count == Self.mostWaiting ? .stopReading : .none
                }
            }
        }
    }

    // MARK: Answers

    /// The responder's answer has been written to its end, or could not be (`wentOut` false).
    mutating func responderAnswered(wentOut: Bool, now: NIODeadline) -> Action {
        if case .closed = state { return .none }
        guard wentOut else {
            state = .closed
            return .close
        }
        lastActivity = now
        return update { exchanges, closing in
            guard case .answering(var waiting) = exchanges.responder else {
                preconditionFailure("no answer was being made")
            }
            guard !waiting.isEmpty else {
                exchanges.responder = .idle
                return .none
            }
            let next = waiting.removeFirst()
            exchanges.responder = .answering(waiting: waiting)
            return .startResponder(next, resumeReading: waiting.count == Self.mostWaiting - 1)
        }
    }

    /// A cache hit's bytes have gone out (or failed to).
    mutating func cacheHitWritten(now: NIODeadline) -> Action {
        if case .closed = state { return .none }
        lastActivity = now
        return update { exchanges, _ in
            precondition(exchanges.cacheHitWritesInFlight > 0, "no cache hit was in flight")
            exchanges.cacheHitWritesInFlight -= 1
            return .none
        }
    }

    /// The connection can take more bytes (`writable`), or cannot for now.
    mutating func writabilityChanged(writable: Bool) -> Action {
        update { exchanges, _ in
            exchanges.writable = writable
            return writable ? .resumeWriters : .none
        }
    }

    // MARK: Time, shutdown, hang-up

    /// The time to look has come.
    mutating func idleCheck(now: NIODeadline) -> Action {
        guard let exchanges else { return .none }
        // An answer is on its way: the client waits, it is not idle.
        if exchanges.owesAnswers { return .checkAt(now + idleTimeout) }
        let due = lastActivity + idleTimeout
        guard now >= due else { return .checkAt(due) }
        state = .closed
        return .close
    }

    /// The server asked connections to finish.
    mutating func quiesce() -> Action {
        guard case .open(let exchanges) = state else { return .none }
        state = .quiescing(exchanges)
        return update { _, _ in .none }
    }

    /// The connection closed (the client hung up, or an action closed it).
    mutating func inactive() -> Action {
        let wasAnswering: Bool
        if case .answering? = exchanges?.responder { wasAnswering = true } else { wasAnswering = false }
        state = .closed
        return .endAnswers(cancelAnswer: wasAnswering)
    }

    // MARK: -

    /// What the connection owes, unless it is closed.
    private var exchanges: Exchanges? {
        switch state {
        case .open(let exchanges), .quiescing(let exchanges), .closingAfterAnswers(let exchanges): exchanges
        case .closed: nil
        }
    }

    /// Changes what an open connection owes with `change` (told whether the connection is to
    /// close once done), then closes it if it is to close and nothing more is owed: `.close`, or
    /// the action `change` returned. A closed connection is left as it is.
    private mutating func update(_ change: (inout Exchanges, _ closing: Bool) -> Action) -> Action {
        let action: Action
        switch state {
        case .closed:
            return .none
        case .open(var exchanges):
            action = change(&exchanges, false)
            state = .open(exchanges)
            return action
        case .quiescing(var exchanges):
            action = change(&exchanges, true)
            state = .quiescing(exchanges)
        case .closingAfterAnswers(var exchanges):
            action = change(&exchanges, true)
            state = .closingAfterAnswers(exchanges)
        }
        guard exchanges?.isDone == true, case .none = action else { return action }
        state = .closed
        return .close
    }

    /// Breaks a precondition when the state is one the machine never reaches.
    func checkInvariants() {
        guard let exchanges else { return }
        precondition(exchanges.cacheHitWritesInFlight >= 0)
        if case .offeredToCache = exchanges.reading, case .answering = exchanges.responder {
            preconditionFailure("a request was offered to the cache hits while the responder answers")
        }
    }
}
