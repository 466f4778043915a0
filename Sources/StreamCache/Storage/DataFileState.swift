/// What the index last saw of a data file: its size and modification time. A file that no
/// longer looks so was changed by something else (or by a write never recorded), and is read
/// again against its checksums.
package struct DataFileState: Hashable, Sendable {
    package var size: Int64
    /// Nanoseconds since 1970.
    package var modified: Int64
}
