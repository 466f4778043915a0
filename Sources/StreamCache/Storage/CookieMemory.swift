/// The cookies of stored responses (``StoredFields/cookies``) by resource row, in this process's
/// memory only: never written to the index, and gone with the process. A new version of a
/// resource is a new row, so one version's cookies never go with another's.
final class CookieMemory: Sendable {
    /// The most rows remembered; past it, one is forgotten for each new one.
    static let capacity = 4096

    private let cookies = Locked([Int64: [HeaderField]]())

    /// Remembers `fields` as the cookies of row `id`'s response (none: forgets it).
    func remember(_ fields: [HeaderField], for id: Int64) {
        cookies.withLock { cookies in
            guard !fields.isEmpty else {
                cookies[id] = nil
                return
            }
            if cookies[id] == nil, cookies.count >= Self.capacity { cookies.remove(at: cookies.startIndex) }
            cookies[id] = fields
        }
    }

    /// `record` with the cookies remembered for its row.
    func attach(to record: ResourceRecord) -> ResourceRecord {
        guard let fields = cookies.withLock({ $0[record.id] }) else { return record }
        var attached = record
        attached.info.stored = record.info.stored.withCookies(fields)
        return attached
    }
}
