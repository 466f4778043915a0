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

    /// Whether the answer is the one the origin gives to a request for `first...last` (`nil`: to
    /// the end): it holds every byte of the resource, so a request from the first byte to its
    /// last or past it.
    func answers(first: Int64, last: Int64?) -> Bool {
        first == 0 && (last.map { $0 >= Int64(bytes.count) - 1 } ?? true)
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
