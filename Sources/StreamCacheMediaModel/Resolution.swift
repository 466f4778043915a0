/// A video resolution, `1280x720`.
public struct Resolution: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init?(parsing text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width >= 0, height >= 0 else {
            return nil
        }
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
}
