// The MPD model, parser and writer, for the users of DASH packages.
@_exported import StreamCacheDASHModel
