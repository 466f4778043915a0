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
/// `Request` is what the responder needs of a request; the machine only keeps and hands it back.
struct ProxyConnection<Request> {
    enum Action {
        case none
        /// Answer this request from the cache if it can be (``cacheHitAnswered(closes:inFlight:now:)``),
        /// else hand it back (``cacheHitDeclined(_:)``).
        case answerFromCache(Request)
        /// Run the responder for this request; `resumeReading` when reading had stopped.
        case startResponder(Request, resumeReading: Bool)
        /// Stop reading: as many requests wait as the connection keeps.
        case stopReading
        /// Close the connection once the cache hit just written has gone out.
        case closeWhenWritten
        case close
        /// Look again at this time (``idleCheck(now:)``).
        case checkAt(NIODeadline)
        /// The connection is gone: cancel the responder's answer in progress.
        case cancelAnswer
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

    /// Whether the connection takes more requests.
    enum Phase: Equatable {
        case open
        /// Graceful shutdown: the requests read are answered, then the connection closes.
        case quiescing
        /// A request asked to close: it is answered, those after it are dropped.
        case closingAfterAnswers
        case closed
    }

    /// Requests waiting behind the one answered before the connection stops reading (a client
    /// pipelining without end). Requests the decoder holds already parsed still come after it
    /// stops: the bound is on reads, not on this count.
    static var mostWaiting: Int { 16 }

    let idleTimeout: TimeAmount
    private(set) var phase = Phase.open
    private(set) var reading = Reading.betweenRequests
    /// Whole requests waiting for the responder.
    private(set) var waiting: [Request] = []
    /// Whether the responder is answering a request.
    private(set) var answering = false
    /// Cache hits written whose bytes have not all gone out (those sent from a file).
    private(set) var cacheHitWritesInFlight = 0
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
        guard phase == .quiescing, waiting.isEmpty else { return false }
        switch reading {
        case .betweenRequests, .discarding: return true
        case .request, .offeredToCache: return false
        }
    }

    /// Whether an answer is owed or being written: the client waits on the connection, which is
    /// not idle.
    var owesAnswers: Bool { answering || !waiting.isEmpty || cacheHitWritesInFlight > 0 }

    // MARK: Reading

    /// A request's head was read; `closes` when the connection closes after its answer.
    mutating func headRead(_ request: Request, closes: Bool, now: NIODeadline) -> Action {
        guard phase != .closed else { return .none }
        guard phase == .open else {
            // After a request that closes, or once the server asked to finish: not answered.
            reading = .discarding
            return .none
        }
        lastActivity = now
        if closes { phase = .closingAfterAnswers }
        guard !owesResponderAnswers else {
            reading = .request(request)
            return .none
        }
        reading = .offeredToCache
        return .answerFromCache(request)
    }

    /// The cache hits answered the request offered (``Action/answerFromCache(_:)``); `inFlight` when
    /// its bytes go out after this (``cacheHitWritten(now:)`` follows).
    mutating func cacheHitAnswered(inFlight: Bool, now: NIODeadline) -> Action {
        guard case .offeredToCache = reading else { preconditionFailure("no request was offered to the cache hits") }
        reading = .discarding
        lastActivity = now
        if inFlight { cacheHitWritesInFlight += 1 }
        guard closesWhenDone else { return .none }
        phase = .closed
        return .closeWhenWritten
    }

    /// The cache hits did not answer the request offered: the responder will, once its end is read.
    mutating func cacheHitDeclined(_ request: Request) {
        guard case .offeredToCache = reading else { preconditionFailure("no request was offered to the cache hits") }
        reading = .request(request)
    }

    /// A part of a request's body was read.
    mutating func bodyRead(now: NIODeadline) {
        if phase != .closed { lastActivity = now }
    }

    /// A request's end was read.
    mutating func endRead(now: NIODeadline) -> Action {
        guard phase != .closed else { return .none }
        lastActivity = now
        switch reading {
        case .betweenRequests, .discarding:
            reading = .betweenRequests
            return .none
        case .offeredToCache:
            preconditionFailure("the cache hits have not answered")
        case .request(let request):
            reading = .betweenRequests
            if !answering {
                answering = true
                return .startResponder(request, resumeReading: false)
            }
            waiting.append(request)
            return waiting.count == Self.mostWaiting ? .stopReading : .none
        }
    }

    // MARK: Answers

    /// The responder's answer has been written to its end, or could not be (`wentOut` false).
    mutating func responderAnswered(wentOut: Bool, now: NIODeadline) -> Action {
        guard phase != .closed else { return .none }
        precondition(answering, "no answer was being made")
        answering = false
        lastActivity = now
        guard wentOut else {
            phase = .closed
            waiting = []
            return .close
        }
        if !waiting.isEmpty {
            answering = true
            let next = waiting.removeFirst()
            return .startResponder(next, resumeReading: waiting.count == Self.mostWaiting - 1)
        }
        return closesWhenDone ? closed() : .none
    }

    /// A cache hit's bytes have gone out (or failed to).
    mutating func cacheHitWritten(now: NIODeadline) -> Action {
        guard phase != .closed else { return .none }
        precondition(cacheHitWritesInFlight > 0, "no cache hit was in flight")
        cacheHitWritesInFlight -= 1
        lastActivity = now
        return closesWhenDone ? closed() : .none
    }

    // MARK: Time, shutdown, hang-up

    /// The time to look has come.
    mutating func idleCheck(now: NIODeadline) -> Action {
        guard phase != .closed else { return .none }
        // An answer is on its way: the client waits, it is not idle.
        if owesAnswers { return .checkAt(now + idleTimeout) }
        let due = lastActivity + idleTimeout
        return now >= due ? closed() : .checkAt(due)
    }

    /// The server asked connections to finish.
    mutating func quiesce() -> Action {
        guard phase == .open else { return .none }
        phase = .quiescing
        return closesWhenDone ? closed() : .none
    }

    /// The connection closed (the client hung up, or an action closed it).
    mutating func inactive() -> Action {
        let wasAnswering = answering && phase != .closed
        phase = .closed
        waiting = []
        reading = .betweenRequests
        return wasAnswering ? .cancelAnswer : .none
    }

    // MARK: -

    /// Whether the responder owes an answer: a cache hit now would overtake it.
    private var owesResponderAnswers: Bool {
        if answering || !waiting.isEmpty { return true }
        if case .request = reading { return true }
        return false
    }

    /// Whether the connection closes now that nothing more is owed.
    private var closesWhenDone: Bool {
        guard phase == .quiescing || phase == .closingAfterAnswers, !owesAnswers else { return false }
        switch reading {
        case .betweenRequests, .discarding: return true
        case .request, .offeredToCache: return false
        }
    }

    private mutating func closed() -> Action {
        phase = .closed
        return .close
    }

    /// Breaks a precondition when the state is one the machine never reaches.
    func checkInvariants() {
        precondition(answering || waiting.isEmpty, "requests wait while nothing is answered")
        precondition(cacheHitWritesInFlight >= 0)
        if phase == .closed { precondition(waiting.isEmpty, "a closed connection keeps requests") }
    }
}
