import NIOCore
import StreamCacheTesting
import Testing

@testable import StreamCacheServer

/// A proxy connection's state machine: the order of answers, when it closes, how far a client
/// may pipeline; first case by case, then over seeded sequences of events.
@Suite struct ProxyConnectionTests {
    typealias Machine = ProxyConnection<Int>
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    let timeout = TimeAmount.seconds(30)

    func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

    /// Reads request `id` whole (head and end) and says what the machine asks for.
    func read(_ id: Int, closes: Bool = false, into machine: inout Machine, at time: Int64 = 1) -> [Machine.Action] {
        let head = machine.headRead(id, closes: closes, now: at(time))
        if case .answerFromCache(let offered) = head { #expect(machine.cacheHitDeclined(offered) == .none) }
        return [head, machine.endRead(now: at(time))]
    }

    @Test func anIdleConnectionClosesAfterTheTimeoutFromItsLastActivity() {
        var machine = Machine(idleTimeout: timeout, now: start)
        #expect(machine.firstCheck == .checkAt(at(30)))
        #expect(machine.idleCheck(now: at(29)) == .checkAt(at(30)))

        // A request and its answer move the start of the idle time.
        #expect(read(1, into: &machine, at: 10) == [.answerFromCache(1), .startResponder(1, resumeReading: false)])
        #expect(machine.responderAnswered(wentOut: true, now: at(25)) == .none)
        #expect(machine.idleCheck(now: at(30)) == .checkAt(at(55)))
        #expect(machine.idleCheck(now: at(55)) == .close)
    }

    @Test func anAnswerOnItsWayIsNeverCutHoweverLong() {
        var machine = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &machine)
        #expect(machine.idleCheck(now: at(31)) == .checkAt(at(61)))
        #expect(machine.idleCheck(now: at(3_600)) == .checkAt(at(3_630)))
        #expect(machine.responderAnswered(wentOut: true, now: at(3_601)) == .none)
        #expect(machine.idleCheck(now: at(3_631)) == .close)

        // A cache hit sent from a file, too, until its bytes have gone out.
        var hit = Machine(idleTimeout: timeout, now: start)
        #expect(hit.headRead(2, closes: false, now: at(1)) == .answerFromCache(2))
        #expect(hit.cacheHitAnswered(inFlight: true, now: at(1)) == .reportWhenWritten)
        #expect(hit.endRead(now: at(1)) == .none)
        #expect(hit.idleCheck(now: at(600)) == .checkAt(at(630)))
        #expect(hit.cacheHitWritten(now: at(601)) == .none)
        #expect(hit.idleCheck(now: at(631)) == .close)
    }

    @Test func aRequestThatStopsHalfwayIsIdle() {
        var machine = Machine(idleTimeout: timeout, now: start)
        _ = machine.headRead(1, closes: false, now: at(1))
        #expect(machine.cacheHitDeclined(1) == .none)
        #expect(machine.bodyRead(now: at(20)) == .none)
        #expect(machine.idleCheck(now: at(31)) == .checkAt(at(50)))
        #expect(machine.idleCheck(now: at(50)) == .close)
    }

    @Test func shutdownClosesAnIdleConnectionAtOnceAndABusyOneAfterItsLastAnswer() {
        var idle = Machine(idleTimeout: timeout, now: start)
        #expect(idle.quiesce() == .close)

        var busy = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &busy)
        _ = read(2, into: &busy)
        #expect(busy.quiesce() == .none)
        // A request read once the server asked to finish is not answered.
        #expect(read(3, into: &busy) == [.none, .none])
        #expect(busy.responderAnswered(wentOut: true, now: at(2)) == .startResponder(2, resumeReading: false))
        // The last answer owed says the connection closes.
        #expect(busy.answersLast)
        #expect(busy.responderAnswered(wentOut: true, now: at(3)) == .close)

        var pipelined = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &pipelined)
        #expect(pipelined.quiesce() == .none)
        #expect(pipelined.answersLast, "the answer under way is the last")
        var open = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &open)
        _ = read(2, into: &open)
        #expect(!open.answersLast, "no stop asked")
    }

    @Test func aCacheHitIsOfferedOnlyWhenTheResponderOwesNothing() {
        var machine = Machine(idleTimeout: timeout, now: start)
        #expect(read(1, into: &machine) == [.answerFromCache(1), .startResponder(1, resumeReading: false)])
        // While 1 is answered, 2 would overtake it: it waits for the responder.
        #expect(read(2, into: &machine) == [.none, .none])
        #expect(machine.responderAnswered(wentOut: true, now: at(2)) == .startResponder(2, resumeReading: false))
        #expect(machine.responderAnswered(wentOut: true, now: at(3)) == .none)
        #expect(machine.headRead(3, closes: false, now: at(4)) == .answerFromCache(3))
        #expect(machine.cacheHitAnswered(inFlight: false, now: at(4)) == .none)
        #expect(machine.endRead(now: at(4)) == .none)
        #expect(!machine.owesAnswers)
    }

    @Test func aClosingRequestIsAnsweredAndTheOnesAfterItDropped() {
        var machine = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &machine)
        _ = read(2, closes: true, into: &machine)
        // Pipelined after the close: never answered.
        #expect(read(3, into: &machine) == [.none, .none])
        #expect(machine.responderAnswered(wentOut: true, now: at(2)) == .startResponder(2, resumeReading: false))
        #expect(machine.responderAnswered(wentOut: true, now: at(3)) == .close)

        // A cache hit that closes closes once its bytes have gone out, sent from memory or not.
        for fromFile in [false, true] {
            var hit = Machine(idleTimeout: timeout, now: start)
            #expect(hit.headRead(1, closes: true, now: at(1)) == .answerFromCache(1))
            #expect(hit.cacheHitAnswered(inFlight: fromFile, now: at(1)) == .reportWhenWritten)
            #expect(hit.endRead(now: at(1)) == .none)
            #expect(hit.cacheHitWritten(now: at(1)) == .close)
        }
    }

    @Test func writersWaitForRoomAndFailWhenTheConnectionGoes() {
        var machine = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &machine)
        #expect(machine.isWritable)
        #expect(machine.writabilityChanged(writable: false) == .none)
        #expect(!machine.isWritable)
        #expect(machine.writabilityChanged(writable: true) == .resumeWriters)
        #expect(machine.isWritable)
        #expect(machine.inactive() == .endAnswers(cancelAnswer: true))
        #expect(!machine.isWritable, "a closed connection takes nothing")
        #expect(machine.writabilityChanged(writable: true) == .none)
    }

    @Test func aClientPipeliningWithoutEndIsStoppedThenResumed() {
        var machine = Machine(idleTimeout: timeout, now: start)
        _ = read(0, into: &machine)
        for id in 1..<Machine.mostWaiting {
            #expect(read(id, into: &machine).last == Machine.Action.none)
        }
        #expect(read(Machine.mostWaiting, into: &machine).last == .stopReading)
        #expect(machine.responderAnswered(wentOut: true, now: at(2)) == .startResponder(1, resumeReading: true))
        #expect(machine.responderAnswered(wentOut: true, now: at(2)) == .startResponder(2, resumeReading: false))
    }

    @Test func anAnswerCutShortClosesAndAHangUpCancelsTheAnswer() {
        var machine = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &machine)
        _ = read(2, into: &machine)
        #expect(machine.responderAnswered(wentOut: false, now: at(2)) == .close)
        #expect(machine.inactive() == .endAnswers(cancelAnswer: false))

        var hungUp = Machine(idleTimeout: timeout, now: start)
        _ = read(1, into: &hungUp)
        #expect(hungUp.inactive() == .endAnswers(cancelAnswer: true))
        #expect(read(2, into: &hungUp) == [.none, .none])
    }

    /// Seeded lives of a connection: a client sends requests (some with bodies, some asking to
    /// close), the cache answers some, the responder takes its time or fails, the clock jumps,
    /// the server shuts down, the client hangs up.
    @Test(arguments: 0..<400)
    func seededLives(seed: Int) {
        var life = Life(seed: UInt64(seed), timeout: timeout, start: start)
        life.run(steps: 300)
    }

    /// The seeded lives, together, reach every state and return every action the machine has.
    @Test func seededLivesReachEveryStateAndAction() {
        var seen: Set<String> = []
        for seed in 0..<400 {
            var life = Life(seed: UInt64(seed), timeout: timeout, start: start)
            life.run(steps: 300)
            seen.formUnion(life.seen)
        }
        let states = ["open", "quiescing", "closingAfterAnswers", "closed"]
        let actions = [
            "none", "answerFromCache", "startResponder", "stopReading", "reportWhenWritten", "close", "checkAt",
            "resumeWriters", "endAnswers",
        ]
        #expect(Set(states.map { "state " + $0 } + actions.map { "action " + $0 }).subtracting(seen) == [])
    }
}

extension ProxyConnection.Action: Equatable where Request: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none), (.stopReading, .stopReading), (.reportWhenWritten, .reportWhenWritten),
            (.close, .close), (.resumeWriters, .resumeWriters):
            true
        case (.endAnswers(let a), .endAnswers(let b)): a == b
        case (.answerFromCache(let a), .answerFromCache(let b)): a == b
        case (.startResponder(let a, let x), .startResponder(let b, let y)): a == b && x == y
        case (.checkAt(let a), .checkAt(let b)): a == b
        default: false
        }
    }
}

/// One seeded life of a connection, with what a client would notice checked at every step:
/// answers start in the order of the requests, one responder answer at a time, nothing after a
/// closing request, no close while an answer is owed (but for a failed write or a hang-up), an
/// idle close only after the timeout, and at a clean close every request read was answered.
private struct Life {
    typealias Machine = ProxyConnection<Int>
    var machine: Machine
    var random: SeededRandom
    let timeout: TimeAmount
    var now: NIODeadline
    var lastActivity: NIODeadline
    var nextCheck: NIODeadline?
    var readingStopped = false
    var closed = false
    var cleanClose = false
    /// The request being sent: its id and the body parts still to send.
    var sending: (id: Int, bodyParts: Int)?
    var nextID = 0
    var answering: Int?
    var cacheHitsInFlight = 0
    var answered: [Int] = []
    /// Requests whose end was read before any closing request's end: each is owed an answer.
    var owed: Set<Int> = []
    var closingID: Int?
    /// The first request whose head came after the server asked the connection to finish.
    var quiescedFrom: Int?
    /// The answer begun as the connection's last (``ProxyConnection/answersLast``).
    var lastAnswer: Int?
    /// The kinds of state reached and of action returned: `state open`, `action close`.
    var seen: Set<String> = []
    /// Whether the responder of this life is slow, so that the client pipelines up to the bound.
    let slowResponder: Bool

    init(seed: UInt64, timeout: TimeAmount, start: NIODeadline) {
        machine = Machine(idleTimeout: timeout, now: start)
        random = SeededRandom(seed: seed)
        slowResponder = random.chance(0.1)
        self.timeout = timeout
        now = start
        lastActivity = start
        if case .checkAt(let deadline) = machine.firstCheck { nextCheck = deadline }
    }

    mutating func run(steps: Int) {
        for _ in 0..<steps where !closed {
            step()
            machine.checkInvariants()
            seen.insert("state " + String(describing: machine.state).prefix { $0 != "(" })
            #expect(answered == answered.sorted() && Set(answered).count == answered.count, "answers out of order")
            if let closingID { #expect(answered.allSatisfy { $0 <= closingID }, "answered after a close") }
            if let quiescedFrom { #expect(answered.allSatisfy { $0 < quiescedFrom }, "answered after the stop") }
            if let lastAnswer { #expect(answered.last == lastAnswer, "answered after the last answer") }
        }
        if cleanClose { #expect(owed.isSubset(of: Set(answered)), "closed with requests unanswered") }
    }

    mutating func step() {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<45 where !readingStopped: clientSends()
        case 45..<70 where answering != nil && !(slowResponder && random.chance(0.95)):
            let wentOut = random.chance(0.97)
            answering = nil
            if wentOut { lastActivity = now }
            apply(machine.responderAnswered(wentOut: wentOut, now: now), failure: !wentOut)
        case 70..<80 where cacheHitsInFlight > 0:
            cacheHitsInFlight -= 1
            lastActivity = now
            apply(machine.cacheHitWritten(now: now))
        case 80..<95:
            now = now + .seconds(Int64.random(in: 0...40, using: &random))
            if let check = nextCheck, check <= now {
                nextCheck = nil
                apply(machine.idleCheck(now: now), idle: true)
            }
        case 95..<98:
            if quiescedFrom == nil { quiescedFrom = nextID }
            apply(machine.quiesce())
        case 98:
            closed = true
            apply(machine.inactive())
            seen.insert("state closed")
        case 99:
            apply(machine.writabilityChanged(writable: random.chance(0.5)))
        default:
            break
        }
    }

    mutating func clientSends() {
        lastActivity = now
        guard let (id, bodyParts) = sending else {
            let id = nextID
            nextID += 1
            let closes = random.chance(0.03)
            if closes, closingID == nil { closingID = id }
            sending = (id, random.chance(0.2) ? Int.random(in: 1...3, using: &random) : 0)
            apply(machine.headRead(id, closes: closes, now: now))
            return
        }
        if bodyParts > 0 {
            sending = (id, bodyParts - 1)
            apply(machine.bodyRead(now: now))
            return
        }
        sending = nil
        if closingID.map({ id <= $0 }) ?? true, quiescedFrom.map({ id < $0 }) ?? true { owed.insert(id) }
        apply(machine.endRead(now: now))
    }

    mutating func apply(_ action: Machine.Action, failure: Bool = false, idle: Bool = false) {
        seen.insert("action " + String(describing: action).prefix { $0 != "(" })
        switch action {
        case .none:
            break
        case .answerFromCache(let id):
            guard random.chance(0.5) else { return apply(machine.cacheHitDeclined(id)) }
            #expect(answering == nil, "a cache hit while the responder answers")
            answered.append(id)
            let fromFile = random.chance(0.3)
            let action = machine.cacheHitAnswered(inFlight: fromFile, now: now)
            if fromFile { #expect(action == .reportWhenWritten, "a hit sent from a file is not watched") }
            apply(action)
        case .reportWhenWritten:
            cacheHitsInFlight += 1
        case .startResponder(let id, let resume):
            #expect(answering == nil, "two responder answers at once")
            answering = id
            answered.append(id)
            if machine.answersLast { lastAnswer = id }
            if resume {
                #expect(readingStopped)
                readingStopped = false
            }
        case .stopReading:
            #expect(machine.waiting.count == Machine.mostWaiting)
            readingStopped = true
        case .close:
            if !failure {
                #expect(cacheHitsInFlight == 0 && answering == nil, "closed while an answer is owed")
                cleanClose = true
            }
            if idle { #expect(now >= lastActivity + timeout, "closed before the idle timeout") }
            closed = true
            apply(machine.inactive())
        case .checkAt(let deadline):
            nextCheck = deadline
        case .resumeWriters:
            #expect(machine.isWritable)
        case .endAnswers(let cancel):
            if cancel { answering = nil }
        }
    }
}
