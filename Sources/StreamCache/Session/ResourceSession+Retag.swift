extension ResourceSession {
    /// What the bytes of a whole body before a fetch's start said of its new entity tag.
    enum RetagCheck {
        /// They are the cached bytes: the version stands under the new tag; `rest` is the part
        /// of the last chunk read from the fetch's start on.
        case same(rest: ArraySlice<UInt8>)
        /// They differ, or none could be compared: a new version.
        case changed
    }

    /// Reads a body that starts at `start` up to `first` (the byte the fetch wants next) and
    /// compares what it brings with the bytes the file holds there: a whole body sent under
    /// another entity tag, or the cached bytes a request asked for again as its proof. An origin
    /// that tags every response anew (per server, per request) sends the same bytes; a replaced
    /// file does not. Bytes before `first` the file lacks are not kept.
    nonisolated func checkRetag(_ body: OriginBody, from start: Int64, upTo first: Int64) async throws -> RetagCheck {
        var chunks = body.makeAsyncIterator()
        var position = start
        var compared: Int64 = 0
        while position < first {
            guard let chunk = try await chunks.next() else {
                throw StreamCacheError(.originUnreachable, "the origin ended the body \(first - position) bytes short")
            }
            let before = Int(min(Int64(chunk.count), first - position))
            guard let count = try await comparedWithCache(chunk[..<before], at: position) else { return .changed }
            compared += count
            position += Int64(chunk.count)
            if position >= first { return compared > 0 ? .same(rest: chunk[before...]) : .changed }
        }
        return compared > 0 ? .same(rest: []) : .changed
    }

    /// Compares `bytes`, at `offset` of the resource, with the ones the file holds there.
    ///
    /// - Returns: how many bytes were compared, or `nil` if one differs.
    func comparedWithCache(_ bytes: ArraySlice<UInt8>, at offset: Int64) throws -> Int64? {
        let span = ByteRange(offset, offset + Int64(bytes.count))
        var compared: Int64 = 0
        for cached in machine.written.ranges where cached.upperBound > span.lowerBound {
            guard cached.lowerBound < span.upperBound else { break }
            let common = ByteRange(max(cached.lowerBound, span.lowerBound), min(cached.upperBound, span.upperBound))
            let held = try [UInt8](unsafeUninitializedCapacity: Int(common.count)) { buffer, count in
                count = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: common.lowerBound)
            }
            let start = bytes.startIndex + Int(common.lowerBound - offset)
            guard held.count == Int(common.count), held.elementsEqual(bytes[start..<start + held.count]) else {
                return nil
            }
            compared += common.count
        }
        return compared
    }

    /// Whether fetch `id`'s whole body, sent for `If-Range` as `newInfo`, is to be told from the
    /// cached version by its bytes before `first` (``checkRetag(_:upTo:)``).
    func mayBeRetagged(_ id: Int, as newInfo: ContentInfo, before first: Int64) -> Bool {
        machine.mayBeRetagged(id, as: newInfo, before: first)
    }

    /// Carries out what the bytes said: the version takes the new tag and fields, stored for every
    /// process; or it is replaced, and this fetch, cancelled, ends.
    ///
    /// - Returns: the content information the rest of the body is read under, or `nil` if the fetch ends.
    func retag(_ id: Int, as newInfo: ContentInfo, _ check: RetagCheck) async throws -> ContentInfo? {
        switch check {
        case .same:
            logger.info("the origin tagged the same bytes anew", metadata: ["key": "\(key)"])
            guard let info = machine.retagged(id, as: newInfo, now: .now) else { return nil }
            try? await index.update(id: record.id, info: info)
            return info
        case .changed:
            guard let cancel = machine.changedUnderFetch(id, to: newInfo) else { return nil }
            wakeAll()
            try await replaceVersion(with: newInfo, cancel: cancel)
            return nil
        }
    }
}
