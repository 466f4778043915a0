/// The whole of a new version as the check that found it brought it: the answer to the check's
/// first sample, which asks a small resource cached whole for up to ``VersionSamples/firstSpan``
/// bytes, so that its next version comes in the same answer.
///
/// The first fetch of that version replays the answer instead of asking the origin again: a live
/// playlist without validators, checked on every reload, costs one request a change, not two.
/// The answer is the origin's, for the version the machine moved to; the fetch judges it as it
/// judges any answer.
struct CheckedBody: Sendable {
    let head: OriginResponseHead
    let bytes: [UInt8]
    /// When the answer came.
    let receivedAt: ContinuousClock.Instant

    /// How long after it came the answer is replayed at most. The fetch it stands for follows
    /// the check at once; later, the stored copy would count its age from the replay (an origin
    /// that sends no `Date` says nothing of it), and a reader would be better served by the
    /// origin's answer of then.
    static let shelfLife: Duration = .seconds(1)

    init(head: OriginResponseHead, bytes: [UInt8], receivedAt: ContinuousClock.Instant = .now) {
        self.head = head
        self.bytes = bytes
        self.receivedAt = receivedAt
    }

    /// Whether the answer, replayed at `now`, is the one the origin gives to a request for
    /// `first...last` (`nil`: to the end): it came less than ``shelfLife`` ago and holds every
    /// byte of the resource, so a request from the first byte to its last or past it.
    func answers(first: Int64, last: Int64?, now: ContinuousClock.Instant) -> Bool {
        now < receivedAt + Self.shelfLife && first == 0 && (last.map { $0 >= Int64(bytes.count) - 1 } ?? true)
    }

    /// The answer's body, once.
    var body: OriginBody {
        let sent = Locked(false)
        let bytes = bytes
        return OriginBody {
            sent.withLock { sent in
                defer { sent = true }
                return sent ? nil : bytes
            }
        }
    }
}
