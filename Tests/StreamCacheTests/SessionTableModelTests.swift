import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// The engine's session table against a naive model: seeded random interleavings of what the
/// engine does with it — leases taken and released, opens that succeed or fail, broken sessions
/// dropped, closers waiting out the linger, idle closes, making room, shutdown — on three keys.
@Suite struct SessionTableModelTests {
    final class Session {}

    /// What the model knows of one key.
    struct Expected {
        var leases = 0
        var session: Session?
        var opening = false
        var lingeringSince: ContinuousClock.Instant?
        /// Closers started and not yet ended.
        var closers = 0
    }

    static let keys = ["a", "b", "c"]
    static let linger = Duration.seconds(10)

    /// The lives run as ``HeavyWork``, off the cooperative pool; a broken rule is recorded from
    /// there as an issue of the run.
    @Test func randomLivesKeepEveryRule() async {
        let test = self
        await HeavyWork.run {
            for seed in UInt64(1)...2000 { test.life(seed: seed) }
        }
    }

    /// 200 random steps; a broken rule is reported with the seed and the step.
    private func life(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = SessionTable<Session, Int>()
        var model: [String: Expected] = [:]
        var now = ContinuousClock.now
        for step in 0..<200 {
            let key = Self.keys.randomElement(using: &random)!
            var expected = model[key, default: Expected()]
            let context = "seed \(seed), step \(step), key \(key)"
            switch Int.random(in: 0..<9, using: &random) {
            case 0:  // A handle leases the key; it opens a session if there is none.
                table.lease(key)
                expected.leases += 1
                if table.state(key) == nil {
                    table.startOpening(key, step)
                    expected.opening = true
                }
            case 1:  // The open in progress ends, well or not.
                guard case .opening = table.state(key) else { break }
                expected.opening = false
                if Bool.random(using: &random) {
                    let session = Session()
                    table.opened(key, session)
                    expected.session = session
                } else {
                    table.forget(key)
                }
            case 2, 3:  // A handle releases its lease.
                guard expected.leases > 0 else {
                    let startsCloser = table.release(key, now: now)
                    #expect(!startsCloser, "\(context): a release without a lease")
                    break
                }
                expected.leases -= 1
                let startsCloser = table.release(key, now: now)
                if expected.leases == 0 {
                    #expect(startsCloser == (expected.lingeringSince == nil), "\(context): one closer per linger")
                    if startsCloser { expected.closers += 1 }
                    expected.lingeringSince = now
                } else {
                    #expect(!startsCloser, "\(context): a closer while leased")
                }
            case 4:  // Time passes.
                now = now.advanced(by: .seconds(Int.random(in: 1...6, using: &random)))
            case 5:  // A closer wakes up.
                guard expected.closers > 0 else { break }
                let step = table.lingerStep(key, now: now, linger: Self.linger, stopping: false)
                let wanted: SessionTable<Session, Int>.LingerStep
                if let since = expected.lingeringSince {
                    let due = since.advanced(by: Self.linger)
                    wanted = expected.leases > 0 ? .inUse : due > now ? .wait(until: due) : .close
                } else {
                    // Its linger was ended meanwhile (room made): it closes if it can.
                    wanted = .close
                }
                #expect(step == wanted, "\(context): \(step), expected \(wanted)")
                if case .wait = wanted { break }
                expected.closers -= 1
                expected.lingeringSince = nil
                if wanted == .close {
                    model[key] = expected
                    Self.closeIfIdle(key, &table, &expected, context)
                }
            case 6:  // The session broke: dropped, the next lease opens another.
                guard let session = expected.session else { break }
                #expect(table.isCurrent(key, session))
                table.forget(key)
                expected.session = nil
            case 7:  // Making room: every unleased key stops lingering and closes if idle.
                for other in table.unleasedKeys {
                    table.stopLingering(other)
                    model[other, default: Expected()].lingeringSince = nil
                    var entry = model[other, default: Expected()]
                    Self.closeIfIdle(other, &table, &entry, context)
                    model[other] = entry
                }
                expected = model[key, default: Expected()]
            default:  // An idle close asked for (a reader left).
                Self.closeIfIdle(key, &table, &expected, context)
            }
            model[key] = expected
            Self.check(table, model, context)
        }
        // Shutdown: nothing lingers; every session nobody leases is closed.
        for key in table.entries.keys { table.stopLingering(key) }
        for (key, session) in table.openSessions where model[key]?.leases == 0 {
            let closed = table.close(key, session)
            #expect(closed)
        }
        #expect(table.openSessions.allSatisfy { model[$0.key]?.leases ?? 0 > 0 })
        #expect(table.entries.values.allSatisfy { $0.releasedAt == nil })
    }

    /// The engine's `closeIfIdle`: a session closes only when open, unleased and not lingering.
    private static func closeIfIdle(
        _ key: String,
        _ table: inout SessionTable<Session, Int>,
        _ expected: inout Expected,
        _ context: String
    ) {
        let closable = table.closable(key)
        let should = expected.session != nil && expected.leases == 0 && expected.lingeringSince == nil
        #expect((closable != nil) == should, "\(context): closable \(closable != nil), expected \(should)")
        guard let closable else { return }
        #expect(closable === expected.session)
        let closed = table.close(key, closable)
        #expect(closed)
        expected.session = nil
    }

    /// The table holds what the model holds, and nothing for a key with nothing left.
    private static func check(_ table: SessionTable<Session, Int>, _ model: [String: Expected], _ context: String) {
        for key in keys {
            let expected = model[key] ?? Expected()
            let entry = table.entries[key]
            #expect((entry?.leases ?? 0) == expected.leases, "\(context): leases of \(key)")
            #expect(entry?.releasedAt == expected.lingeringSince, "\(context): linger of \(key)")
            switch entry?.state {
            case .open(let session): #expect(session === expected.session && !expected.opening, "\(context): \(key)")
            case .opening: #expect(expected.opening && expected.session == nil, "\(context): \(key) opening")
            case nil: #expect(expected.session == nil && !expected.opening, "\(context): \(key) has no state")
            }
            if expected.leases == 0 && expected.session == nil && !expected.opening && expected.lingeringSince == nil {
                #expect(entry == nil, "\(context): an empty entry for \(key) stays")
            }
        }
    }
}
